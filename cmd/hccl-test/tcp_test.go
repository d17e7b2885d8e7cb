package main

// End-to-end tests of --backend tcp through the built binary: ranks started
// by hccl-test itself (-p), by mpirun, by a torchrun-style environment, in
// two network namespaces, and the ways a run can fail (a killed rank, a
// rank that never comes, a stranger at the door). Every process is bounded
// in time and killed at the end of its test if still running.

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/tcp"
)

// small is a sweep that runs in well under a second on loopback.
var small = []string{"--backend", "tcp", "-b", "1K", "-e", "64K", "-n", "2", "-w", "1",
	"--link-bw", "10GB/s", "-T", "30s", "--connect-timeout", "30s"}

// long is a sweep long enough to kill a rank in the middle of: 11 rows
// with 50 timed iterations each.
var long = []string{"--backend", "tcp", "--op", "allreduce", "-b", "1K", "-e", "1M", "-f", "2", "-n", "50", "-w", "1",
	"--link-bw", "10GB/s", "-T", "10s", "--connect-timeout", "10s"}

// args joins flag lists.
func args(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// cleanEnv is this process's environment without anything that would make
// the binary think a launcher started it, or change its timeouts.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "RANK", name == "WORLD_SIZE", name == "LOCAL_RANK", name == "MASTER_ADDR", name == "MASTER_PORT",
			strings.HasPrefix(name, "OMPI_"), strings.HasPrefix(name, "PMI_"), strings.HasPrefix(name, "PMIX_"),
			strings.HasPrefix(name, "SLURM_"), strings.HasPrefix(name, "HCCL_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// torchEnv is the environment torchrun gives rank `rank` of `size`.
func torchEnv(rank, size int, master, secret string) []string {
	host, port, _ := net.SplitHostPort(master)
	env := cleanEnv("RANK="+strconv.Itoa(rank), "WORLD_SIZE="+strconv.Itoa(size), "MASTER_ADDR="+host, "MASTER_PORT="+port)
	if secret != "" {
		env = append(env, tcp.EnvSecret+"="+secret)
	}
	return env
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuf is an output buffer the test reads while the process writes it.
type syncBuf struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is a started process whose output the test watches.
type proc struct {
	name        string
	cmd         *exec.Cmd
	out, errOut syncBuf
	done        chan struct{} // closed once it has exited
	code        int           // exit code, -1 if killed by a signal; valid once done
}

// start starts name (a binary) with args and env; the process is killed
// when the test ends if it is still running.
func start(t *testing.T, label string, env []string, name string, arg ...string) *proc {
	t.Helper()
	p := &proc{name: label, cmd: exec.Command(name, arg...), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", label, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -2
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits up to limit for p to exit and returns its exit code; if p is
// still running then, it kills it and fails the test: a hang.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	t.Fatalf("%s hung: still running after %v\nstdout:\n%s\nstderr:\n%s", p.name, limit, p.out.String(), p.errOut.String())
	return 0
}

// rows returns the table rows of a run's stdout, failing t on a line that
// is neither a comment nor a row.
func rows(t *testing.T, stdout string) [][]string {
	t.Helper()
	var out [][]string
	for _, line := range strings.Split(stdout, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("row does not parse: %q", line)
			continue
		}
		out = append(out, m)
	}
	return out
}

// checkTable checks a complete, correct table of a run on `ranks` ranks:
// the header, want rows all with 0 wrong elements, types among dtypes,
// and the footer.
func checkTable(t *testing.T, stdout string, ranks, want int, dtypes []string) {
	t.Helper()
	if h := fmt.Sprintf("# backend tcp  ranks %d ", ranks); !strings.Contains(stdout, h) {
		t.Errorf("no header %q in stdout:\n%s", h, stdout)
	}
	rs := rows(t, stdout)
	if len(rs) != want {
		t.Errorf("%d rows, want %d", len(rs), want)
	}
	for _, m := range rs {
		if m[11] != "0" {
			t.Errorf("row with %s wrong elements: %q", m[11], m[0])
		}
		found := false
		for _, d := range dtypes {
			found = found || m[3] == d
		}
		if !found {
			t.Errorf("row of type %s, asked for %v: %q", m[3], dtypes, m[0])
		}
	}
	if !strings.Contains(stdout, "# wrong elements: 0 OK") {
		t.Errorf("footer lacks \"# wrong elements: 0 OK\":\n%s", stdout)
	}
}

// procInfo is a running process as /proc shows it.
type procInfo struct {
	pid, ppid int
	rank      string // HCCL_TEST_RANK, for ranks hccl-test -p started
}

// running lists the processes running the program at bin: the test's
// binary lives in its own temporary directory, so these are the test's
// processes and their descendants.
func running(t *testing.T, bin string) []procInfo {
	t.Helper()
	want, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to look for leftover processes in: %v", err)
	}
	var out []procInfo
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe"))
		if err != nil || exe != want {
			continue // gone, a zombie, not ours to read, or another program
		}
		pi := procInfo{pid: pid}
		if stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil {
			// "pid (comm) state ppid ...": comm may hold anything but
			// ends at the last ')'.
			if i := bytes.LastIndexByte(stat, ')'); i > 0 {
				if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
					pi.ppid, _ = strconv.Atoi(f[1])
				}
			}
		}
		if env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ")); err == nil {
			for _, kv := range bytes.Split(env, []byte{0}) {
				if v, ok := bytes.CutPrefix(kv, []byte(tcp.EnvRank+"=")); ok {
					pi.rank = string(v)
				}
			}
		}
		out = append(out, pi)
	}
	return out
}

// noLeftovers fails t if any process still runs bin, and kills them.
func noLeftovers(t *testing.T, bin string) {
	t.Helper()
	left := running(t, bin)
	for _, p := range left {
		t.Errorf("leftover process %d (parent %d, rank %q) still running %s", p.pid, p.ppid, p.rank, bin)
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

// waitRows waits up to limit for at least n rows in p's stdout.
func waitRows(t *testing.T, p *proc, n int, limit time.Duration) {
	t.Helper()
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if strings.Count(p.out.String(), "\n ") >= n {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%d) before printing %d rows\nstdout:\n%s\nstderr:\n%s", p.name, p.code, n, p.out.String(), p.errOut.String())
		default:
		}
	}
	t.Fatalf("%s printed no %d rows within %v\nstdout:\n%s", p.name, n, limit, p.out.String())
}

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
	// 9 collectives x 2 types x 7 sizes (1K..64K), one root each.
	const wantRows = 9 * 2 * 7
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
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun is not installed (apt-get install openmpi-bin)")
	}
	if v, _ := exec.Command(mpirun, "--version").CombinedOutput(); !bytes.Contains(v, []byte("Open MPI")) {
		t.Skipf("mpirun is not Open MPI's (the test uses its flags): %q", strings.TrimSpace(string(v)))
	}
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
			{"slurm", cleanEnv("SLURM_PROCID=0", "SLURM_NTASKS=2"), []string{"--master", master}},
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
				if took > 5*time.Second {
					t.Errorf("took %v to refuse", took)
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

// TestTCPKilledRank: one of four torchrun-style ranks is killed with
// SIGKILL mid-sweep. Rank 0 must fail promptly, say which op and which
// peer, and keep the rows it had printed.
func TestTCPKilledRank(t *testing.T) {
	bin := buildBinary(t)
	master := freeAddr(t)
	var ps []*proc
	for r := range 4 {
		ps = append(ps, start(t, fmt.Sprintf("rank %d", r), torchEnv(r, 4, master, "kill-test-secret"), bin, long...))
	}
	waitRows(t, ps[0], 2, 60*time.Second)
	before := ps[0].out.String()
	if err := ps[2].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	code := ps[0].wait(t, 15*time.Second)
	t.Logf("rank 0 exited %d after %v", code, time.Since(killed).Round(time.Millisecond))
	stdout, stderr := ps[0].out.String(), ps[0].errOut.String()
	if code == 0 {
		t.Fatalf("rank 0 exit 0 with rank 2 killed (did the sweep end before the kill?)\nstdout:\n%s", stdout)
	}
	if !strings.HasPrefix(stdout, before) || len(rows(t, before)) < 2 {
		t.Errorf("the rows printed before the kill are not all in rank 0's stdout:\nbefore:\n%s\nafter:\n%s", before, stdout)
	}
	if !strings.Contains(stdout, "# stopped early") {
		t.Errorf("the footer does not say the run stopped early:\n%s", stdout)
	}
	if !strings.Contains(stderr, "allreduce") {
		t.Errorf("rank 0's stderr does not name the op: %q", stderr)
	}
	m := rankNamed.FindStringSubmatch(stderr)
	switch {
	case m == nil:
		t.Errorf("rank 0's stderr names no peer rank: %q", stderr)
	case m[1] != "2":
		// Rank 0 reports the first of its own peers to fail, which is often
		// rank 1 or 3 closing after they lost rank 2.
		t.Errorf("rank 2 was killed, but rank 0 blames rank %s: %q", m[1], strings.TrimSpace(stderr))
	}
	for _, r := range []int{1, 3} {
		if code := ps[r].wait(t, 15*time.Second); code == 0 {
			t.Errorf("rank %d exit 0 after rank 2 was killed", r)
		}
	}
	ps[2].wait(t, 5*time.Second)
	noLeftovers(t, bin)
}

// TestTCPKilledChild: with -p 3, one of the child ranks is killed with
// SIGKILL mid-sweep. The parent must fail promptly naming the op and a
// rank, and leave no process behind.
func TestTCPKilledChild(t *testing.T) {
	bin := buildBinary(t)
	parent := start(t, "hccl-test -p 3", cleanEnv(), bin, args(long, []string{"-p", "3"})...)
	waitRows(t, parent, 2, 60*time.Second)
	var victim procInfo
	var kids []procInfo
	for _, p := range running(t, bin) {
		if p.ppid == parent.cmd.Process.Pid {
			kids = append(kids, p)
			if p.rank == "1" {
				victim = p
			}
		}
	}
	if len(kids) != 2 || victim.pid == 0 {
		t.Fatalf("children of the parent (pid %d): %+v, want ranks 1 and 2", parent.cmd.Process.Pid, kids)
	}
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	code := parent.wait(t, 15*time.Second)
	t.Logf("the parent exited %d after %v", code, time.Since(killed).Round(time.Millisecond))
	noLeftovers(t, bin)
	stderr := parent.errOut.String()
	if code == 0 {
		t.Fatalf("the parent exit 0 with rank 1 killed\nstdout:\n%s", parent.out.String())
	}
	if !strings.Contains(stderr, "allreduce") || !rankNamed.MatchString(stderr) {
		t.Errorf("the parent's stderr should name the op and a peer rank:\n%s", stderr)
	}
	if len(rows(t, parent.out.String())) < 2 || !strings.Contains(parent.out.String(), "# stopped early") {
		t.Errorf("stdout should keep the rows and say the run stopped early:\n%s", parent.out.String())
	}
	// The parent saw its child die and could say so.
	if !regexp.MustCompile(`rank 1\b[^\n]*(killed|pid ` + strconv.Itoa(victim.pid) + `)`).MatchString(stderr) {
		t.Errorf("the parent knows rank 1 (pid %d) was killed by SIGKILL but does not say so:\n%s", victim.pid, stderr)
	}
}

// TestTCPMissingRank: a world of three whose rank 2 never starts. Rank 0
// gives up after the connect timeout and names rank 2.
func TestTCPMissingRank(t *testing.T) {
	bin := buildBinary(t)
	master := freeAddr(t)
	flags := args(small, []string{"--connect-timeout", "2s"})
	r0 := start(t, "rank 0", torchEnv(0, 3, master, "missing-test-secret"), bin, flags...)
	r1 := start(t, "rank 1", torchEnv(1, 3, master, "missing-test-secret"), bin, flags...)
	begin := time.Now()
	code := r0.wait(t, 10*time.Second)
	t.Logf("rank 0 exited %d after %v", code, time.Since(begin).Round(time.Millisecond))
	if code == 0 {
		t.Fatalf("rank 0 exit 0 with rank 2 missing")
	}
	if s := r0.errOut.String(); strings.Count(s, "\n") != 1 || !strings.Contains(s, "rank 2 ") {
		t.Errorf("rank 0's stderr should be one line naming rank 2: %q", s)
	}
	if r0.out.String() != "" {
		t.Errorf("rank 0 printed a table without a world:\n%s", r0.out.String())
	}
	if code := r1.wait(t, 10*time.Second); code == 0 {
		t.Errorf("rank 1 exit 0 with rank 2 missing")
	}
	if s := r1.errOut.String(); !strings.Contains(s, "rank 0") {
		t.Errorf("rank 1's stderr should name rank 0, whose rendezvous failed: %q", s)
	}
	noLeftovers(t, bin)
}
