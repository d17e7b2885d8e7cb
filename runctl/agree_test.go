package runctl

import (
	"strings"
	"testing"
)

// TestMismatchVerdict builds rank 0's verdict from hand-made slots: empty
// when every rank agrees, else the first differing rank's field and every
// differing rank as ranges.
func TestMismatchVerdict(t *testing.T) {
	for _, tc := range []struct {
		name  string
		diffs []string // by rank: its first difference, "" for none
		want  string
	}{
		{"all agree", []string{"", "", ""}, ""},
		{"one", []string{"", "", "maxbytes=2 where rank 0 has maxbytes=1"},
			"rank 2 has maxbytes=2 where rank 0 has maxbytes=1 (ranks that differ from rank 0: 2)"},
		{"ranges", []string{"", "a", "b", "c", "", "d", "", "e", "f"},
			"rank 1 has a (ranks that differ from rank 0: 1-3,5,7-8)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slots := make([]byte, len(tc.diffs)*agreeSlotMax)
			for r, d := range tc.diffs {
				putText(slots[r*agreeSlotMax:(r+1)*agreeSlotMax], d)
			}
			got := mismatchVerdict(slots, len(tc.diffs))
			if tc.want == "" {
				if got != "" {
					t.Errorf("verdict %q, want none", got)
				}
				return
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("verdict %q, want it to start %q", got, tc.want)
			}
		})
	}
}

// TestPutTextCuts: a text longer than its buffer is cut, never refused.
func TestPutTextCuts(t *testing.T) {
	buf := make([]byte, 8)
	putText(buf, "abcdefgh")
	if got := getText(buf); got != "abcd" {
		t.Errorf("got %q, want %q", got, "abcd")
	}
}
