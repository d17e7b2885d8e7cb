package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// TestSimClockLimit runs simulated worlds whose virtual time passes what a
// clock can count (a tiny bandwidth, a week's delay on every message, a
// week-slow rank): each run fails (exit 1) with one line naming the clock's
// limit, the rank and the op, instead of wrapping to a time of 0 and
// passing.
func TestSimClockLimit(t *testing.T) {
	bin := buildBinary(t)
	tests := []struct {
		name string
		args []string
	}{
		{"tiny link", []string{"--link-bw", "1B/s", "-b", "1G", "-e", "1G", "-n", "20", "--sim-data=false", "-p", "4"}},
		// Holds under -T each, that add up past the clock's limit (a hold
		// past -T fails the op at once instead).
		{"tiny injected bw", []string{"--inject", "bw=1B/s", "-T", "168h", "-b", "128K", "-e", "128K", "-n", "20000", "--sim-data=false", "-p", "4"}},
		{"long delays", []string{"--inject", "delay=50h", "-T", "168h", "-b", "1K", "-e", "1K", "-n", "10000", "-p", "8"}},
		{"week-slow rank", []string{"--inject", "slow=168h@rank=1", "-T", "168h", "-b", "1K", "-e", "1K", "-n", "10000", "-p", "8"}},
	}
	// The bound is on a hang (a clock that never reaches its limit runs
	// for hours), scaled from a healthy run of the same kind measured
	// now: 10000 ops of 8 ranks, more than any case does before its limit.
	healthy := wallbound.Baseline(func() {
		if _, stderr, code := runBinary(t, bin, "--backend", "sim", "-w", "0", "--inject", "delay=1us", "-T", "168h",
			"-b", "1K", "-e", "1K", "-n", "10000", "-p", "8"); code != 0 {
			t.Fatalf("the healthy run: exit %d: %s", code, stderr)
		}
	})
	limit := wallbound.Bound(0, healthy)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--backend", "sim", "-w", "0"}, tc.args...)
			_, stderr, code := runBounded(t, limit, bin, args...)
			if code != exitFailed {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitFailed, stderr)
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one line", stderr)
			}
			for _, want := range []string{"the virtual clock reached its limit of 100 years", "rank ", "op #"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
		})
	}
}

// TestErrorLines runs commands whose errors echo a user's text with a
// newline in it, or describe a timeout at 4096 ranks: each error is one
// line on stderr, short whatever the world's size (the 4096-rank timeout
// listed every rank, 331 KB; a path with a newline made three lines).
func TestErrorLines(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	tests := []struct {
		name string
		env  []string
		args []string
		code int
		want []string
	}{
		{"csv path with a newline", nil, []string{"--csv", dir + "/no/such\ndir", "-b", "1K", "-e", "1K"}, exitUsage,
			[]string{`--csv "` + dir + `/no/such\ndir": stat ` + dir + `/no: no such file or directory`}},
		{"scenario path with a newline", nil, []string{"scenario", dir + "/x\ny.json"}, exitUsage,
			[]string{`"` + dir + `/x\ny.json"`}},
		{"profile path with a newline", []string{"HCCL_TEST_CPUPROFILE=" + dir + "/no/p\nq"}, []string{"-b", "1K", "-e", "1K", "-n", "1", "-w", "0"}, exitUsage,
			[]string{`HCCL_TEST_CPUPROFILE="` + dir + `/no/p\nq": stat ` + dir + `/no: no such file`}},
		{"timeout at 4096 ranks", nil, []string{"-p", "4096", "-b", "1K", "-e", "1K", "-n", "1", "-w", "0", "-T", "2s",
			"--algo", "ring", "--link-bw", "1GB/s", "--inject", "slow=4s@rank=2"}, exitFailed,
			[]string{"timed out; still in it: ranks ", " more"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runBinaryEnv(t, bin, tc.env, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || len(stderr) > maxErrorLine+100 {
				t.Fatalf("stderr of %d bytes, %d lines, want one line of at most %d: %.2000q",
					len(stderr), strings.Count(stderr, "\n"), maxErrorLine+100, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

// runBinaryEnv is runBinary with variables added to the environment.
func runBinaryEnv(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return runCaptured(t, cmd, args)
}

// runCaptured runs cmd, whose arguments are args, and returns its stdout,
// stderr and exit code; a command that could not run fails the test.
func runCaptured(t *testing.T, cmd *exec.Cmd, args []string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", args, err)
	}
	return o.String(), e.String(), code
}
