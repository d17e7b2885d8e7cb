package inject

import (
	"errors"
	"fmt"
	"testing"
)

// TestHeldRank: the rank a fault held is found through any wrapping (a
// peer's receive that carries it, a call's error), and not where no
// transport was held; a hang report leads with that rank's own error (on
// shm a receiver's error carrying the fault came first 1 time in a loaded
// suite run, and the report named rank 0 for a delay on rank 3).
func TestHeldRank(t *testing.T) {
	held := injected{errors.New("a hold of 1m0s of the send to rank 0"), 3}
	tests := []struct {
		name string
		err  error
		rank int
		ok   bool
	}{
		{"its own", held, 3, true},
		{"through a peer's receive", fmt.Errorf("rank 0, op #1: recv from rank 3: %w", held), 3, true},
		{"a failure no hold made", injected{errors.New("injected failure of a send"), -1}, 0, false},
		{"not a fault's", errors.New("timed out"), 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rank, ok := HeldRank(tc.err)
			if rank != tc.rank || ok != tc.ok {
				t.Errorf("HeldRank = %d, %v; want %d, %v", rank, ok, tc.rank, tc.ok)
			}
		})
	}
}
