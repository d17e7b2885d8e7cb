package world

import (
	"slices"
	"strings"
	"testing"
)

func TestParseLayout(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want []int // by GroupKinds
		err  string
	}{
		{"tp=4,dp=2", 8, []int{4, 1, 1, 2, 1}, ""},
		{"DP=2, tp=2, pp=2", 8, []int{2, 1, 1, 2, 2}, ""},
		{"ep=8", 8, []int{1, 1, 8, 1, 1}, ""},
		{"tp=4,dp=3", 8, nil, "multiply to 12, not the 8 ranks of the world"},
		{"tp=3", 8, nil, "multiply to 3"},
		{"xp=2", 2, nil, `unknown kind "xp"`},
		{"tp=2,tp=2", 4, nil, "tp given twice"},
		{"tp=0", 8, nil, "want 1 to 4096 ranks per group"},
		{"tp", 8, nil, "not KIND=SIZE"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			l, err := ParseLayout(tt.in, tt.n)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(l.Sizes, tt.want) {
				t.Fatalf("got %v, %v; want %v", l.Sizes, err, tt.want)
			}
		})
	}
}

// TestLayoutMembers checks the Megatron layout on tp=2, dp=2, pp=2: every
// rank is in exactly one group of each kind, at its own coordinate, and
// two ranks share a group of at most one kind.
func TestLayoutMembers(t *testing.T) {
	l, err := ParseLayout("tp=2,dp=2,pp=2", 8)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"tp": {6, 7}, "dp": {5, 7}, "pp": {3, 7}, "cp": {7}}
	for kind, w := range want {
		if got := l.Members(kind, 7); !slices.Equal(got, w) {
			t.Errorf("%s group of rank 7: %v, want %v", kind, got, w)
		}
	}
	shared := map[[2]int]int{}
	for _, kind := range GroupKinds {
		for r := range 8 {
			m := l.Members(kind, r)
			if !slices.Contains(m, r) {
				t.Errorf("rank %d not in its own %s group %v", r, kind, m)
			}
			for _, p := range m {
				if p != r {
					shared[[2]int{r, p}]++
				}
				if !slices.Equal(l.Members(kind, p), m) {
					t.Errorf("ranks %d and %d disagree about their %s group", r, p, kind)
				}
			}
		}
	}
	for pair, kinds := range shared {
		if kinds > 1 {
			t.Errorf("ranks %v share %d groups", pair, kinds)
		}
	}
}
