package main

import (
	"strings"
	"testing"
)

// TestDomainsRun sweeps inside groups and with fusion on both backends:
// exit 0, every row correct, and the group and bucket columns present.
func TestDomainsRun(t *testing.T) {
	bin := buildBinary(t)
	for _, backend := range []string{"shm", "tcp"} {
		t.Run(backend, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, bin, "--backend", backend, "-p", "4", "--groups", "tp=2,dp=2",
				"--group", "tp,dp", "--op", "allreduce,broadcast", "-r", "-1", "-b", "1K", "-e", "64K", "-f", "8",
				"-n", "3", "-w", "1", "--link-bw", "10GB/s", "--fusion", "4")
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			for _, want := range []string{"# groups tp=2 dp=2", "tp/2", "dp/2", "buckets  fuse", "# wrong elements: 0 OK"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}
