package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStatusOnSIGQUIT sends SIGQUIT to a run held up by a late rank: every
// rank must say what it is doing, and the run must go on to finish.
func TestStatusOnSIGQUIT(t *testing.T) {
	bin := buildBinary(t)
	for _, backend := range []string{"shm", "tcp", "proc"} {
		t.Run(backend, func(t *testing.T) {
			cmd := exec.Command(bin, "--backend", backend, "-p", "3", "-b", "1K", "-e", "4K", "-f", "2",
				"-n", "2", "-w", "1", "--algo", "ring", "--link-bw", "1GB/s", "--inject", "slow=700ms@rank=2")
			var stdout, stderr syncBuf
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Ask once the first row is out, and again until the ranks
			// answer: on a loaded host they may not have started 1.5 s in
			// ("no rank is running", true then), and a rank process still
			// in the Go runtime's start dies of a SIGQUIT passed on to it.
			// The held rank keeps the run going for seconds after that.
			tick := time.NewTicker(300 * time.Millisecond)
			defer tick.Stop()
			deadline := time.After(2 * time.Minute)
		wait:
			for {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("run did not finish cleanly after SIGQUIT: %v\n%s", err, stderr.String())
					}
					break wait
				case <-tick.C:
					if strings.Contains(stdout.String(), "\n        1024 ") && !strings.Contains(stderr.String(), "rank 0: ") {
						_ = cmd.Process.Signal(syscall.SIGQUIT)
					}
				case <-deadline:
					_ = cmd.Process.Kill()
					t.Fatal("run did not finish")
				}
			}
			report := stderr.String()
			for _, want := range []string{"rank 0: ", "rank 1: ", "rank 2: ", "in op #", "waiting"} {
				if !strings.Contains(report, want) {
					t.Errorf("report lacks %q:\n%s", want, report)
				}
			}
			if !strings.Contains(stdout.String(), "# wrong elements: 0 OK") {
				t.Errorf("run did not finish its table:\n%s", stdout.String())
			}
		})
	}
}
