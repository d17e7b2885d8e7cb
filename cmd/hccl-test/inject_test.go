package main

import (
	"strings"
	"testing"
)

// TestInject runs the harness with each kind of injected fault on both
// backends and checks its visible effect.
func TestInject(t *testing.T) {
	bin := buildBinary(t)
	base := []string{"-p", "4", "-b", "4K", "-e", "64K", "-f", "4", "-n", "5", "-w", "1", "--link-bw", "1GB/s", "--algo", "ring"}
	for _, backend := range []string{"shm", "tcp", "proc"} {
		args := func(extra ...string) []string {
			return append(append([]string{"--backend", backend}, base...), extra...)
		}
		t.Run(backend+"/corruption is caught", func(t *testing.T) {
			stdout, stderr, code := runBinary(t, bin, args("--inject", "corrupt=p:0.3", "--seed", "7")...)
			if code != exitWrong || !strings.Contains(stdout, "FAILED") {
				t.Errorf("exit %d, want %d with wrong elements:\n%s\n%s", code, exitWrong, stdout, stderr)
			}
		})
		t.Run(backend+"/a failed send ends the run naming rank and op", func(t *testing.T) {
			stdout, stderr, code := runBinary(t, bin, args("--inject", "fail=op:12@rank=2")...)
			if code != exitFailed {
				t.Fatalf("exit %d, want %d:\n%s\n%s", code, exitFailed, stdout, stderr)
			}
			for _, want := range []string{"injected failure", "rank 2", "op #12"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q: %s", want, stderr)
				}
			}
			if !strings.Contains(stdout, "# stopped early") {
				t.Errorf("no footer with the error:\n%s", stdout)
			}
		})
		t.Run(backend+"/a slow rank is named the straggler", func(t *testing.T) {
			stdout, stderr, code := runBinary(t, bin, args("--inject", "slow=3ms@rank=3")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			rows := dataRows(stdout)
			if len(rows) == 0 || !strings.Contains(stdout, "# faults injected: slow=3ms@rank=3") {
				t.Fatalf("no rows or no faults line:\n%s", stdout)
			}
			for _, l := range rows {
				if f := strings.Fields(l); f[11] != "3" {
					t.Errorf("slow rank %s, want 3: %q", f[11], l)
				}
			}
		})
	}
}
