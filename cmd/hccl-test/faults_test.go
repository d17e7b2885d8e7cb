package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// faultBackends are the backends that run in tests: shm and sim in this
// process, tcp and proc with the children that -p starts.
var faultBackends = []string{"shm", "tcp", "proc", "sim"}

// TestInjectedFaults runs the harness with faults that hit the link probe,
// the cost model's calibration, an op's time limit or a call the check
// does not look at, on every backend: each is named in the error, ends
// within the time limit, and is cured by --retry or reported as wrong.
// The link is measured (--link-bw auto) and the algorithm chosen by the
// cost model (--algo auto), so the harness makes calls of its own before
// the first measured op.
func TestInjectedFaults(t *testing.T) {
	bin := buildBinary(t)
	base := []string{"-p", "4", "-b", "1K", "-e", "4K", "-f", "2", "-n", "3", "-w", "1"}
	tests := []struct {
		name    string
		args    []string
		code    int
		within  time.Duration // from start to exit, generously
		stderr  []string      // in stderr
		never   []string      // not in stderr
		stdout  []string      // in stdout
		backend []string      // nil: faultBackends
	}{
		{
			name: "a delay past the op's time limit ends within it, named",
			// No link probe and no calibration: under a -T of 5s, their
			// 32 MiB exchanges over tcp overran the limit on a loaded
			// host before the delay was reached ("measuring the link ...
			// timed out"). The case below shows a fault spares them.
			args: []string{"--inject", "delay=30s@rank=1", "-T", "5s", "--link-bw", "10GB/s", "--algo", "ring"}, code: exitFailed, within: 15 * time.Second,
			stderr: []string{"rank 1", "injected by --inject delay=30s@rank=1", "time limit of 5s"},
			never:  []string{"measuring the link", "calibrating"},
		},
		{
			name: "a failure at the first measured calls spares the probe and calibration",
			args: []string{"--inject", "fail=op:2", "-T", "20s"}, code: exitFailed, within: 12 * time.Second,
			stderr: []string{"injected failure", "measured op #2", "fail=op:2"},
			never:  []string{"measuring the link", "calibrating", "timed out"},
		},
		{
			name: "--retry cures a transient injected failure",
			args: []string{"--inject", "fail=op:3@rank=1", "--retry", "1", "-T", "20s"}, code: exitOK, within: 15 * time.Second,
			stdout: []string{"# re-runs: 1 op failed", "# wrong elements: 0 OK"},
		},
		{
			name: "corruption of a call the check does not see is reported",
			args: []string{"--inject", "corrupt=op:1", "--link-bw", "1GB/s", "--algo", "ring"}, code: exitWrong, within: 15 * time.Second,
			stdout: []string{"FAILED", "corrupted by --inject in calls the check did not see"},
			stderr: []string{"wrong elements (", "corrupted by --inject"},
		},
	}
	for _, tc := range tests {
		for _, backend := range faultBackends {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				start := time.Now()
				stdout, stderr, code := runBounded(t, tc.within+time.Minute, bin, append(append([]string{"--backend", backend}, base...), tc.args...)...)
				took := time.Since(start)
				if code != tc.code {
					t.Fatalf("exit %d, want %d:\n%s\n%s", code, tc.code, stdout, stderr)
				}
				// Scaled to the host's load: the time limit named in
				// stderr, or its absence, is what says the run ended
				// for the right reason.
				if limit := tc.within + 3*loadSlack(t, bin); took > limit {
					t.Errorf("took %v, want at most %v (%v on this host's load)", took, tc.within, limit)
				}
				for _, w := range tc.stderr {
					if !strings.Contains(stderr, w) {
						t.Errorf("stderr lacks %q:\n%s", w, stderr)
					}
				}
				for _, w := range tc.never {
					if strings.Contains(stderr, w) {
						t.Errorf("stderr has %q:\n%s", w, stderr)
					}
				}
				for _, w := range tc.stdout {
					if !strings.Contains(stdout, w) {
						t.Errorf("stdout lacks %q:\n%s", w, stdout)
					}
				}
			})
		}
	}
}

// TestInterruptInjectedDelay sends SIGINT while every rank is held by an
// injected delay far shorter than its op's time limit: the run ends with
// exit 130 at once, not when the delay is over. (On sim a delay is virtual
// time and takes none of the wall clock's.)
func TestInterruptInjectedDelay(t *testing.T) {
	bin := buildBinary(t)
	for _, backend := range []string{"shm", "tcp", "proc"} {
		t.Run(backend, func(t *testing.T) {
			cmd := exec.Command(bin, "--backend", backend, "-p", "3", "-b", "1K", "-e", "1K", "-n", "3", "-w", "1",
				"--link-bw", "1GB/s", "--algo", "ring", "--inject", "delay=30s", "-T", "2m")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			defer func() { _ = cmd.Process.Kill(); <-done }()
			time.Sleep(3 * time.Second) // past starting, into the first held send
			_ = cmd.Process.Signal(syscall.SIGINT)
			sent := time.Now()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("still running 20s after SIGINT:\n%s", stderr.String())
			}
			if took, limit := time.Since(sent), 2*time.Second+loadSlack(t, bin); took > limit {
				t.Errorf("ended %v after SIGINT, want about 2s at most (%v on this host's load)", took, limit)
			}
			if code := cmd.ProcessState.ExitCode(); code != exitSignal {
				t.Errorf("exit %d, want %d:\n%s\n%s", code, exitSignal, stdout.String(), stderr.String())
			}
			if left := processesOf(t, bin); len(left) > 0 {
				t.Errorf("rank processes left behind: %v", left)
			}
		})
	}
}

// TestScenarioInjectedDelay: a scenario's faults hold its probes and runs
// under its time limit as a sweep's do.
func TestScenarioInjectedDelay(t *testing.T) {
	bin := buildBinary(t)
	for _, backend := range []string{"shm", "sim"} {
		t.Run(backend, func(t *testing.T) {
			start := time.Now()
			_, stderr, code := runBounded(t, time.Minute, bin, "scenario", "--backend", backend, "--iters", "2",
				"--inject", "delay=1h", "-T", "3s", "../../examples/dense-tp-dp.json")
			if code != exitFailed || !strings.Contains(stderr, "injected by --inject delay=1h0m0s") {
				t.Errorf("exit %d, want %d naming the injected delay: %s", code, exitFailed, stderr)
			}
			if took, limit := time.Since(start), 10*time.Second+3*loadSlack(t, bin); took > limit {
				t.Errorf("took %v, want about 3s at most (%v on this host's load)", took, limit)
			}
		})
	}
}

// runBounded runs the binary as runBinary does, but kills it after limit
// (a run that ignores its time limit and SIGTERM would hang the test).
func runBounded(t *testing.T, limit time.Duration, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("killed after %v: %v\n%s", limit, args, e.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", args, err)
	}
	return o.String(), e.String(), code
}
