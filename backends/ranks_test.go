package backends

import (
	"strings"
	"testing"
)

func TestRankList(t *testing.T) {
	every := func(n, step int) []int {
		var rs []int
		for r := 0; r < n; r += step {
			rs = append(rs, r)
		}
		return rs
	}
	tests := []struct {
		name  string
		ranks []int
		want  string
	}{
		{"none", nil, "no rank"},
		{"one", []int{3}, "rank 3"},
		{"two apart", []int{5, 3}, "ranks 3, 5"},
		{"a range", []int{4, 3, 5, 5}, "ranks 3-5"},
		{"mixed", []int{0, 2, 3, 4, 5, 9}, "ranks 0, 2-5, 9"},
		{"two in a row", []int{2, 3, 7, 8, 9}, "ranks 2, 3, 7-9"},
		{"all but one of 4096", append(every(3, 1), every(4096, 1)[4:]...), "ranks 0-2, 4-4095"},
		{"every other of 4096", every(4096, 2), "ranks 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, and 2032 more (2048 in all)"},
	}
	for _, tc := range tests {
		if got := RankList(tc.ranks); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if len(RankList(tc.ranks)) > 200 {
			t.Errorf("%s: %d bytes", tc.name, len(RankList(tc.ranks)))
		}
	}
	if !strings.HasPrefix(RankList(every(4096, 1)), "ranks 0-4095") {
		t.Error(RankList(every(4096, 1)))
	}
}
