package main

// End-to-end tests of --backend tcp through the built binary: ranks started
// by hccl-test itself (-p), by mpirun, by a torchrun-style environment, and
// in two network namespaces.

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/tcp"
	"github.com/hccl-test/hccl-test/coll"
)

// TestTCPRanks runs every collective on 1 to 8 ranks that hccl-test starts
// itself, and checks that every row is correct and no rank process
// outlives the run.
func TestTCPRanks(t *testing.T) {
	bin := buildBinary(t)
	tests := []struct {
		ranks  int
		dtypes []string
	}{
		{1, []string{"fp16", "int32"}},
		{2, []string{"bf16", "fp64"}},
		{3, []string{"fp16", "int32"}},
		{4, []string{"bf16", "fp64"}},
		{8, []string{"fp16", "int32"}},
	}
	// Every collective x 2 types x 7 sizes (1K..64K), one root each.
	wantRows := len(coll.AllOps()) * 2 * 7
	for _, tc := range tests {
		t.Run(fmt.Sprintf("p%d", tc.ranks), func(t *testing.T) {
			p := start(t, "hccl-test -p", cleanEnv(), bin,
				args(small, []string{"-p", strconv.Itoa(tc.ranks), "--op", "all", "-d", strings.Join(tc.dtypes, ","), "-c", "1"})...)
			code := p.wait(t, 90*time.Second)
			noLeftovers(t, bin)
			stdout, stderr := p.out.String(), p.errOut.String()
			if code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
			}
			if stderr != "" {
				t.Errorf("unexpected stderr:\n%s", stderr)
			}
			checkTable(t, stdout, tc.ranks, wantRows, tc.dtypes)
		})
	}
}

// TestTCPMpirun: Open MPI's mpirun starts three ranks; rank 0 prints the
// table and nobody else prints anything.
func TestTCPMpirun(t *testing.T) {
	mpirun := findLauncher(t, "mpirun", "openmpi-bin", openMPIMarks...)
	bin := buildBinary(t)
	master := freeAddr(t)
	dtypes := []string{"fp32", "bf16"}
	p := start(t, "mpirun", cleanEnv(), mpirun,
		args([]string{"--oversubscribe", "--allow-run-as-root", "-np", "3", "-x", tcp.EnvSecret + "=mpirun-test-secret",
			bin, "--master", master, "--op", "allreduce,allgather,alltoall", "-d", strings.Join(dtypes, ",")}, small)...)
	code := p.wait(t, 120*time.Second)
	noLeftovers(t, bin)
	stdout, stderr := p.out.String(), p.errOut.String()
	if code != 0 {
		t.Fatalf("mpirun exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if n := strings.Count(stdout, "# hccl-test "); n != 1 {
		t.Errorf("%d table headers in mpirun's output, want 1 (rank 0's)", n)
	}
	checkTable(t, stdout, 3, 3*2*7, dtypes)
}

// TestTCPTorchrun: ranks started torchrun-style, each with RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT and the shared secret.
func TestTCPTorchrun(t *testing.T) {
	bin := buildBinary(t)

	t.Run("three ranks", func(t *testing.T) {
		master := freeAddr(t)
		dtypes := []string{"int8", "fp16"}
		var ps []*proc
		for r := range 3 {
			ps = append(ps, start(t, fmt.Sprintf("rank %d", r), torchEnv(r, 3, master, "torch-test-secret"), bin,
				args(small, []string{"--op", "reducescatter,broadcast,gather", "-d", strings.Join(dtypes, ",")})...))
		}
		for _, p := range ps {
			if code := p.wait(t, 90*time.Second); code != 0 {
				t.Errorf("%s: exit %d\nstderr:\n%s", p.name, code, p.errOut.String())
			}
			if p.name != "rank 0" && p.out.String() != "" {
				t.Errorf("%s printed to stdout:\n%s", p.name, p.out.String())
			}
			if s := p.errOut.String(); s != "" {
				t.Errorf("%s: unexpected stderr:\n%s", p.name, s)
			}
		}
		checkTable(t, ps[0].out.String(), 3, 3*2*7, dtypes)
		noLeftovers(t, bin)
	})

	// A stranger with another job's secret knocks on rank 0's rendezvous
	// port while rank 0 waits for rank 1: rank 0 drops it, says so on
	// stderr, and runs the job when rank 1 comes.
	t.Run("stranger", func(t *testing.T) {
		master := freeAddr(t)
		const secret = "torch-test-secret"
		r0 := start(t, "rank 0", torchEnv(0, 2, master, secret), bin, args(small, []string{"--connect-timeout", "20s"})...)
		var conn net.Conn
		for end := time.Now().Add(10 * time.Second); conn == nil && time.Now().Before(end); {
			c, err := net.Dial("tcp", master)
			if err != nil {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			conn = c
		}
		if conn == nil {
			t.Fatalf("rank 0 is not listening at %s after 10s\nstderr:\n%s", master, r0.errOut.String())
		}
		defer conn.Close()
		_, err := tcp.Handshake(conn, []byte("another jobs secret"),
			tcp.Hello{Rank: 1, Size: 2, Purpose: tcp.PurposeRendezvous, Addr: "127.0.0.1:9"}, time.Now().Add(5*time.Second))
		if !errors.Is(err, tcp.ErrAuth) {
			t.Errorf("the stranger's handshake: got %v, want ErrAuth", err)
		}
		r1 := start(t, "rank 1", torchEnv(1, 2, master, secret), bin, small...)
		for _, p := range []*proc{r0, r1} {
			if code := p.wait(t, 60*time.Second); code != 0 {
				t.Errorf("%s: exit %d\nstderr:\n%s", p.name, code, p.errOut.String())
			}
		}
		checkTable(t, r0.out.String(), 2, 7, []string{"fp32"})
		if s := r0.errOut.String(); !strings.Contains(s, "dropped connection from "+conn.LocalAddr().String()) ||
			!strings.Contains(s, tcp.ErrAuth.Error()) {
			t.Errorf("rank 0's stderr should say it dropped %s for a wrong proof:\n%s", conn.LocalAddr(), s)
		}
	})

	// A rank started by a launcher without the secret refuses to start,
	// with one line naming the variable, before anything runs.
	t.Run("no secret", func(t *testing.T) {
		master := freeAddr(t)
		tests := []struct {
			name  string
			env   []string
			extra []string
		}{
			{"torchrun", torchEnv(0, 2, master, ""), nil},
			{"open mpi", cleanEnv("OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2"), []string{"--master", master}},
			{"slurm", cleanEnv("SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=9", "SLURM_STEP_ID=0"), []string{"--master", master}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				begin := time.Now()
				p := start(t, tc.name+" rank", tc.env, bin, args(small, tc.extra)...)
				code := p.wait(t, 10*time.Second)
				took := time.Since(begin)
				stdout, stderr := p.out.String(), p.errOut.String()
				if code == 0 {
					t.Fatalf("exit 0 without %s\nstderr:\n%s", tcp.EnvSecret, stderr)
				}
				if code != exitUsage {
					t.Errorf("exit %d without %s; the README gives 2 to configuration refused before anything runs (a bad -p under a launcher does exit 2)", code, tcp.EnvSecret)
				}
				if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tcp.EnvSecret) {
					t.Errorf("stderr %q: want one line naming %s", stderr, tcp.EnvSecret)
				}
				if stdout != "" {
					t.Errorf("stdout not empty: %q", stdout)
				}
				// A refusal before anything runs takes about what a start and
				// an exit take: bounded by that, measured now, not by a time.
				if limit := loadSlack(t, bin); took > limit {
					t.Errorf("took %v to refuse, want about a start and an exit (%v on this host's load)", took, limit)
				}
			})
		}
	})
	noLeftovers(t, bin)
}

// TestTCPAcrossNamespaces runs two ranks on two "hosts": network
// namespaces joined by a veth pair, each rank bound to its own address.
func TestTCPAcrossNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: creating network namespaces needs root")
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("no ip command (iproute2) to create network namespaces with")
	}
	run := func(arg ...string) error {
		out, err := exec.Command(ip, arg...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(arg, " "), err, bytes.TrimSpace(out))
		}
		return nil
	}
	id := os.Getpid()
	nsA, nsB := fmt.Sprintf("hccl-test-%d-a", id), fmt.Sprintf("hccl-test-%d-b", id)
	vethA, vethB := fmt.Sprintf("hv%da", id%10000000), fmt.Sprintf("hv%db", id%10000000)
	subnet := fmt.Sprintf("10.213.%d", id%250+1)
	addrA, addrB := subnet+".1", subnet+".2"
	if err := run("netns", "add", nsA); err != nil {
		t.Skipf("cannot create a network namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = run("netns", "del", nsA)
		_ = run("netns", "del", nsB)
		_ = run("link", "del", vethA) // only if it never left this namespace
	})
	for _, step := range [][]string{
		{"netns", "add", nsB},
		{"link", "add", vethA, "type", "veth", "peer", "name", vethB},
		{"link", "set", vethA, "netns", nsA},
		{"link", "set", vethB, "netns", nsB},
		{"-n", nsA, "addr", "add", addrA + "/24", "dev", vethA},
		{"-n", nsB, "addr", "add", addrB + "/24", "dev", vethB},
		{"-n", nsA, "link", "set", vethA, "up"},
		{"-n", nsB, "link", "set", vethB, "up"},
		{"-n", nsA, "link", "set", "lo", "up"},
		{"-n", nsB, "link", "set", "lo", "up"},
	} {
		if err := run(step...); err != nil {
			t.Fatalf("setting up the namespaces: %v", err)
		}
	}

	bin := buildBinary(t)
	master := net.JoinHostPort(addrA, "29500")
	const secret = "netns-test-secret"
	dtypes := []string{"fp32", "uint8"}
	flags := args(small, []string{"--op", "allreduce,allgather,sendrecv", "-d", strings.Join(dtypes, ","), "--master", master})
	r0 := start(t, "rank 0 in "+nsA, torchEnv(0, 2, master, secret), ip,
		args([]string{"netns", "exec", nsA, bin}, flags, []string{"--bind", addrA})...)
	r1 := start(t, "rank 1 in "+nsB, torchEnv(1, 2, master, secret), ip,
		args([]string{"netns", "exec", nsB, bin}, flags, []string{"--bind", addrB})...)
	for _, p := range []*proc{r0, r1} {
		if code := p.wait(t, 90*time.Second); code != 0 {
			t.Errorf("%s: exit %d\nstderr:\n%s", p.name, code, p.errOut.String())
		}
	}
	checkTable(t, r0.out.String(), 2, 3*2*7, dtypes)
	noLeftovers(t, bin)
}

// rankNamed finds the peer rank an error line blames.
var rankNamed = regexp.MustCompile(`(?:from|to) rank (\d+)\b`)
