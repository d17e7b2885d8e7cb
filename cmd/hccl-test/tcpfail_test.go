package main

// End-to-end tests of how a --backend tcp run fails: a killed rank, a killed
// child, a rank that never comes. Each ends within its limit, never hangs.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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

// TestTCPKilledParent: with -p 3, the parent (rank 0) is killed with
// SIGKILL mid-sweep, so it can neither clean up nor tell anyone. Its
// children notice that their pipe from it has closed and exit on their own.
func TestTCPKilledParent(t *testing.T) {
	bin := buildBinary(t)
	parent := start(t, "hccl-test -p 3", cleanEnv(), bin, args(long, []string{"-p", "3"})...)
	waitRows(t, parent, 2, 60*time.Second)
	var kids []procInfo
	for _, p := range running(t, bin) {
		if p.ppid == parent.cmd.Process.Pid {
			kids = append(kids, p)
		}
	}
	if len(kids) != 2 {
		t.Fatalf("children of the parent (pid %d): %+v, want ranks 1 and 2", parent.cmd.Process.Pid, kids)
	}
	if err := parent.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	parent.wait(t, 5*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for len(running(t, bin)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("children still running 10 s after their parent was killed: %+v", running(t, bin))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
