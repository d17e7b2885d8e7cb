package main

import (
	"strings"
	"testing"
)

// TestHangReport makes rank 2 start its calls far later than the op
// timeout: the run must fail within the timeout's reach, and the error
// must say where the other ranks were and what each waited for.
func TestHangReport(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		backend string
		want    []string
	}{
		// Rank 0 may be stopped before it reaches the op (faulting in
		// buffers) when rank 3 times out first; the report then says so.
		{"shm", []string{"op #1 allreduce(fp32, 256, sum) timed out; still in it:", "rank 0 (|rank 0 was stopped outside an op", "rank 3 (", "still waiting to receive from rank"}},
		// Over tcp the held rank's failure reaches its peers at once (its
		// links drop), so they name it rather than time out themselves.
		{"tcp", []string{"rank 0, op #1", "rank 2, op #1", "injected by --inject slow=2s@rank=2", "(rank ", "exited with status 1: ", "rank 3, op #1"}},
		// Over proc likewise: the held rank drops its links in shared
		// memory too.
		{"proc", []string{"rank 0, op #1", "rank 2, op #1", "injected by --inject slow=2s@rank=2", "(rank ", "exited with status 1: ", "rank 3, op #1"}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			_, stderr, code := runBinary(t, bin, "--backend", tc.backend, "-p", "4", "-b", "1K", "-e", "1K",
				"-n", "3", "-T", "1s", "--algo", "ring", "--link-bw", "1GB/s", "--inject", "slow=2s@rank=2")
			if code != exitFailed {
				t.Fatalf("exit %d, want %d: %s", code, exitFailed, stderr)
			}
			for _, w := range tc.want {
				if !containsAny(stderr, strings.Split(w, "|")) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// containsAny reports whether s holds one of alts.
func containsAny(s string, alts []string) bool {
	for _, a := range alts {
		if strings.Contains(s, a) {
			return true
		}
	}
	return false
}
