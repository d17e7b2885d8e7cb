package main

// End-to-end tests of how a --backend proc run fails when a rank dies: the
// ranks of one host share memory, so a dead peer must be an error within
// the op's time limit, never a fault in another process, and must leave no
// shared memory behind.

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProcKilledRank: one of four torchrun-style ranks on this host is
// killed with SIGKILL mid-sweep, while the others read its buffers. Every
// other rank must fail promptly (not by a signal: no SIGBUS from memory it
// shared), rank 0 naming the op, the rank that died must be named, and
// nothing may be left: no process, no file under /dev/shm.
func TestProcKilledRank(t *testing.T) {
	bin := buildBinary(t)
	master := freeAddr(t)
	flags := args(long, []string{"--backend", "proc", "-b", "64K", "-e", "16M"})
	var ps []*proc
	for r := range 4 {
		ps = append(ps, start(t, fmt.Sprintf("rank %d", r), torchEnv(r, 4, master, "kill-test-secret"), bin, flags...))
	}
	waitRows(t, ps[0], 3, 60*time.Second)
	victim := ps[2].cmd.Process.Pid
	if err := ps[2].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var all strings.Builder
	for _, r := range []int{0, 1, 3} {
		code := ps[r].wait(t, 15*time.Second)
		stderr := ps[r].errOut.String()
		t.Logf("rank %d exited %d after %v: %s", r, code, time.Since(killed).Round(time.Millisecond), strings.TrimSpace(stderr))
		if code == 0 || code == -1 {
			t.Errorf("rank %d exit %d with rank 2 killed, want a failure (not a signal)", r, code)
		}
		if strings.Contains(stderr, "SIGBUS") || strings.Contains(stderr, "unexpected fault") {
			t.Errorf("rank %d faulted on memory rank 2 shared:\n%s", r, stderr)
		}
		all.WriteString(stderr)
	}
	if s := ps[0].errOut.String(); !strings.Contains(s, "allreduce") || !strings.Contains(s, "rank ") {
		t.Errorf("rank 0's stderr should name the op and a rank:\n%s", s)
	}
	if !regexp.MustCompile(fmt.Sprintf(`rank 2 \(pid %d\) has died`, victim)).MatchString(all.String()) {
		t.Errorf("no surviving rank says that rank 2 (pid %d) died:\n%s", victim, all.String())
	}
	ps[2].wait(t, 5*time.Second)
	noLeftovers(t, bin)
	if ents, err := os.ReadDir("/dev/shm"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "hccl-test") {
				t.Errorf("shared memory left behind: /dev/shm/%s", e.Name())
			}
		}
	}
}

// TestProcTwoHosts runs four torchrun-style proc ranks as two hosts of two
// (ranks 0-1 listen on 127.0.0.1, ranks 2-3 on 127.0.0.2, so the
// rendezvous reports two hosts): the ranks of a host share memory, the
// hosts talk TCP, --topology auto finds 2 servers x 2 ranks, and hier and
// the flat ring both give right results, with util against both links.
func TestProcTwoHosts(t *testing.T) {
	bin := buildBinary(t)
	master := freeAddr(t)
	_, port, _ := strings.Cut(master, ":")
	var ps []*proc
	for r := range 4 {
		env := torchEnv(r, 4, "127.0.0.1:"+port, "two-hosts-secret")
		ps = append(ps, start(t, fmt.Sprintf("rank %d", r), env, bin, "--backend", "proc", "--bind", fmt.Sprintf("127.0.0.%d", r/2+1),
			"--topology", "auto", "--algo", "hier,ring", "--op", "allreduce", "-b", "64K", "-e", "1M", "-f", "4", "-n", "3", "-w", "1",
			"--link-bw", "intra=20GB/s,inter=2GB/s", "-T", "30s", "--connect-timeout", "30s"))
	}
	for r, p := range ps {
		if code := p.wait(t, 60*time.Second); code != 0 {
			t.Fatalf("rank %d exit %d:\n%s\n%s", r, code, p.out.String(), p.errOut.String())
		}
	}
	out := ps[0].out.String()
	for _, want := range []string{"# topology 2 servers x 2 ranks", "from the ranks' hosts", "inside a server 20.00 GB/s",
		"between servers 2.00 GB/s", "# wrong elements: 0 OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("rank 0's output lacks %q:\n%s", want, out)
		}
	}
	if n := len(rows(t, out)); n != 6 {
		t.Errorf("%d rows, want 6 (3 sizes x hier, ring):\n%s", n, out)
	}
}

// TestProcTwoNamespaces runs eight torchrun-style proc ranks as two hosts
// of four in network namespaces joined by a veth pair (root only, with
// ip(8); skipped otherwise): the ranks of a namespace share memory, the
// namespaces talk TCP over the veth, --topology auto finds 2 servers x 4
// ranks, and hier and the flat ring give right results.
func TestProcTwoNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	ipCmd, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("no ip(8)")
	}
	bin := buildBinary(t)
	id := strconv.Itoa(os.Getpid() % 10000)
	ns := [2]string{"hccl-a" + id, "hccl-b" + id}
	veth := [2]string{"hva" + id, "hvb" + id}
	addr := [2]string{"10.78.0.1", "10.78.0.2"}
	ip := func(args ...string) error {
		if out, err := exec.Command(ipCmd, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := ip("netns", "add", ns[0]); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { _ = ip("netns", "del", ns[0]) })
	steps := [][]string{
		{"netns", "add", ns[1]},
		{"link", "add", veth[0], "type", "veth", "peer", "name", veth[1]},
	}
	for i := range 2 {
		steps = append(steps, []string{"link", "set", veth[i], "netns", ns[i]},
			[]string{"-n", ns[i], "addr", "add", addr[i] + "/24", "dev", veth[i]},
			[]string{"-n", ns[i], "link", "set", veth[i], "up"},
			[]string{"-n", ns[i], "link", "set", "lo", "up"})
	}
	for i, s := range steps {
		if err := ip(s...); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t.Cleanup(func() { _ = ip("netns", "del", ns[1]) })
		}
	}
	var ps []*proc
	for r := range 8 {
		h := r / 4
		env := torchEnv(r, 8, addr[0]+":29731", "two-namespaces-secret")
		ps = append(ps, start(t, fmt.Sprintf("rank %d", r), env, ipCmd, "netns", "exec", ns[h], bin, "--backend", "proc",
			"--bind", addr[h], "--topology", "auto", "--algo", "hier,ring", "--op", "allreduce", "-b", "1M", "-e", "4M", "-f", "4",
			"-n", "3", "-w", "1", "--link-bw", "intra=20GB/s,inter=5GB/s", "-T", "60s", "--connect-timeout", "60s"))
	}
	for r, p := range ps {
		if code := p.wait(t, 120*time.Second); code != 0 {
			t.Fatalf("rank %d exit %d:\n%s\n%s", r, code, p.out.String(), p.errOut.String())
		}
	}
	out := ps[0].out.String()
	for _, want := range []string{"# topology 2 servers x 4 ranks", "inside a server 20.00 GB/s", "between servers 5.00 GB/s",
		"# wrong elements: 0 OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("rank 0's output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("rank 0:\n%s", out)
}
