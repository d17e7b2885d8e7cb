package shm

import "testing"

// TestLinkBytes: what the memory estimate charges an in-process rank's
// links, written out: 16 B of table and 256 B a pair per table, and 2 KiB a
// link, with 4 KiB x the eager ring's depth up to 64 ranks.
func TestLinkBytes(t *testing.T) {
	eager := int64(EagerDepth) * 4096
	tests := []struct {
		tables, ranks, peers int
		want                 int64
	}{
		{1, 8, 3, 16 + 3*256 + 3*(2048+eager)},
		{2, 8, 3, 2*(16+3*256) + 3*(2048+eager)},
		{1, 64, 63, 16 + 63*256 + 63*(2048+eager)},
		{1, 65, 64, 16 + 64*256 + 64*2048},
		{2, 1024, 10, 2*(16+10*256) + 10*2048},
	}
	for _, tc := range tests {
		if got := LinkBytes(tc.tables, tc.ranks, tc.peers); got != tc.want {
			t.Errorf("LinkBytes(%d, %d, %d) = %d, want %d", tc.tables, tc.ranks, tc.peers, got, tc.want)
		}
	}
	if got := (Backend{}).LinkBytes(8, 3); got != tests[0].want {
		t.Errorf("Backend.LinkBytes(8, 3) = %d, want %d", got, tests[0].want)
	}
}
