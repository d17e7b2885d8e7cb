package main

import (
	"strings"
	"testing"
)

// TestDryRunAcceptedRuns: what --dry-run accepts, the run starts and ends
// with at most one line on stderr, never a Go panic. Sizes up to the
// documented limit of 1 PiB without payload took address space for every
// buffer (two of 64 TiB each are more than amd64's whole user space), and
// the run panicked in internal/vmem where --dry-run said yes.
func TestDryRunAcceptedRuns(t *testing.T) {
	bin := buildBinary(t)
	tests := []struct {
		name string
		args []string
	}{
		{"64T without payload", []string{"--backend", "sim", "-p", "8", "-b", "64T", "-e", "64T", "--sim-data=false"}},
		{"1 PiB without payload", []string{"--backend", "sim", "-p", "8", "-b", "1024T", "-e", "1024T", "--sim-data=false"}},
		{"1 PiB alltoall", []string{"--backend", "sim", "-p", "4", "-b", "1024T", "-e", "1024T", "--sim-data=false", "--op", "alltoall"}},
		{"1 PiB mulsum", []string{"--backend", "sim", "-p", "4", "-b", "1024T", "-e", "1024T", "--sim-data=false", "--redop", "mulsum"}},
		{"1 PiB bruck with retry", []string{"--backend", "sim", "-p", "5", "-b", "1024T", "-e", "1024T", "--sim-data=false",
			"--op", "allgather", "--algo", "bruck", "--retry", "1"}},
		{"1 PiB auto", []string{"--backend", "sim", "-p", "16", "-b", "512T", "-e", "1024T", "--sim-data=false", "--algo", "auto"}},
		{"small on shm", []string{"-p", "2", "-b", "1K", "-e", "64K"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-n", "1", "-w", "0"}, tc.args...)
			_, stderr, code := runBinary(t, bin, append(args, "--dry-run")...)
			if code != exitOK {
				t.Fatalf("--dry-run: exit %d, want %d: %q", code, exitOK, stderr)
			}
			_, stderr, code = runBinary(t, bin, args...)
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
				t.Fatalf("the run panicked (exit %d): %.1000s", code, stderr)
			}
			if code != exitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %q: want 0 and nothing", code, stderr)
			}
		})
	}
}
