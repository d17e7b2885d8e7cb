package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestIsolateLiveShm runs the live search on shm, two ranks counted as a
// host: one pair of hosts (which no rule can call slow, the median being
// its own), exit 0, its CSV row and heatmap written.
func TestIsolateLiveShm(t *testing.T) {
	dir := t.TempDir()
	csvPath, svg := filepath.Join(dir, "pairs.csv"), filepath.Join(dir, "h.svg")
	stdout, stderr, code := runIsolateArgs("--backend", "shm", "-p", "4", "--per-host", "2", "--size", "64K", "-n", "2",
		"--csv", csvPath, "-o", svg)
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0:\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"sendrecv busbw at 65536 bytes", "2 hosts, 1 pairs measured live", "host0 - host1", "searched 4 ranks in 1 rounds"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the report lacks %q:\n%s", want, stdout)
		}
	}
	f, err := os.Open(csvPath)
	must(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	must(t, err)
	if len(rows) != 2 || rows[1][0] != "host0" || rows[1][1] != "host1" || rows[1][7] != "ok" {
		t.Errorf("CSV %v, want the header and host0,host1 ok", rows)
	}
	if st, err := os.Stat(svg); err != nil || st.Size() == 0 {
		t.Errorf("heatmap: %v", err)
	}
}

// TestIsolateLiveNamespaces runs the live search across four network
// namespaces on a bridge (root, ip(8) and tc(8); skipped otherwise), one
// proc rank each, the third one's link rate-limited by a token bucket
// both ways: it is named first, and the command exits 3.
func TestIsolateLiveNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	ipCmd, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("no ip(8)")
	}
	tcCmd, err := exec.LookPath("tc")
	if err != nil {
		t.Skip("no tc(8)")
	}
	bin := buildBinary(t)
	id := strconv.Itoa(os.Getpid() % 10000)
	run := func(name string, args ...string) error {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	br := "ilbr" + id
	if err := run(ipCmd, "link", "add", br, "type", "bridge"); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { _ = run(ipCmd, "link", "del", br) })
	must(t, run(ipCmd, "link", "set", br, "up"))
	const hosts, slow = 4, 2
	net := fmt.Sprintf("10.76.%d", os.Getpid()%250+1)
	var ns []string
	for h := range hosts {
		name, veth, port := fmt.Sprintf("il%s-%d", id, h), fmt.Sprintf("ilv%s%d", id, h), fmt.Sprintf("ilp%s%d", id, h)
		if err := run(ipCmd, "netns", "add", name); err != nil {
			t.Skip(err)
		}
		t.Cleanup(func() { _ = run(ipCmd, "netns", "del", name) })
		ns = append(ns, name)
		for _, step := range [][]string{
			{"link", "add", veth, "type", "veth", "peer", "name", port},
			{"link", "set", veth, "netns", name},
			{"link", "set", port, "master", br},
			{"link", "set", port, "up"},
			{"-n", name, "addr", "add", fmt.Sprintf("%s.%d/24", net, h+1), "dev", veth},
			{"-n", name, "link", "set", veth, "up"},
			{"-n", name, "link", "set", "lo", "up"},
		} {
			must(t, run(ipCmd, step...))
		}
		if h == slow {
			// What it sends (its veth) and what it receives (its bridge port).
			must(t, run(ipCmd, "netns", "exec", name, tcCmd, "qdisc", "add", "dev", veth, "root", "tbf", "rate", "40mbit", "burst", "64kb", "latency", "50ms"))
			must(t, run(tcCmd, "qdisc", "add", "dev", port, "root", "tbf", "rate", "40mbit", "burst", "64kb", "latency", "50ms"))
		}
	}
	var ps []*proc
	for r := range hosts {
		env := torchEnv(r, hosts, net+".1:29741", "isolate-namespaces-secret")
		ps = append(ps, start(t, fmt.Sprintf("rank %d", r), env, ipCmd, "netns", "exec", ns[r], bin, "isolate", "--backend", "proc",
			"--bind", fmt.Sprintf("%s.%d", net, r+1), "--size", "2M", "-n", "10", "-w", "2", "-T", "30s", "--connect-timeout", "60s"))
	}
	for r, p := range ps {
		want := 0
		if r == 0 {
			want = exitNamed
		}
		if code := p.wait(t, 5*time.Minute); code != want {
			t.Fatalf("rank %d exit %d, want %d:\n%s\n%s", r, code, want, p.out.String(), p.errOut.String())
		}
	}
	out := ps[0].out.String()
	if want := fmt.Sprintf("named host 1: %s.%d,", net, slow+1); !strings.Contains(out, want) {
		t.Errorf("rank 0's report lacks %q:\n%s", want, out)
	}
	t.Logf("rank 0:\n%s", out)
}

// TestIsolateLiveSIGPIPE sends SIGPIPE to a rank of a live search over
// tcp: the kernel sends it to a rank that writes to a peer whose process
// died, and the search goes on past that peer's measurements, so the
// rank must not stop (it did, after half a second, with exit 141 and no
// word, and its host was named with the dead one). Every rank ends
// normally and rank 0's report does not say it stopped.
func TestIsolateLiveSIGPIPE(t *testing.T) {
	bin := buildBinary(t)
	const ranks = 4
	master := freeAddr(t)
	var ps []*proc
	for r := range ranks {
		ps = append(ps, start(t, fmt.Sprintf("rank %d", r), torchEnv(r, ranks, master, "isolate-sigpipe-secret"), bin, "isolate",
			"--backend", "tcp", "--per-host", "1", "--size", "4M", "-n", "100", "-T", "60s"))
	}
	// Once rank 1 ignores SIGPIPE it is about to search; without that,
	// after 3 s, when it is searching too.
	target := ps[1].cmd.Process.Pid
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && !ignoresSIGPIPE(target); {
		time.Sleep(10 * time.Millisecond)
	}
	must(t, syscall.Kill(target, syscall.SIGPIPE))
	for r, p := range ps {
		code := p.wait(t, 5*time.Minute)
		if code != exitOK && !(r == 0 && code == exitNamed) {
			t.Fatalf("rank %d exit %d, want 0 (rank 0: 0 or 3):\n%s\n%s", r, code, p.out.String(), p.errOut.String())
		}
	}
	if out := ps[0].out.String(); strings.Contains(out, "stopped") || !strings.Contains(out, "searched 4 ranks in 3 rounds of pairs and 2 groups") {
		t.Errorf("rank 0's report says it stopped, or not that it searched every slot:\n%s", out)
	}
}

// ignoresSIGPIPE reports whether process pid ignores SIGPIPE (bit 13 of
// SigIgn in its /proc status).
func ignoresSIGPIPE(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(syscall.SIGPIPE-1)) != 0
		}
	}
	return false
}
