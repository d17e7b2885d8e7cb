package isolate

import (
	"testing"
)

// TestRounds checks the tournament for every n up to 40 against its
// definition: every pair once, no host twice in a round, n-1 rounds for
// an even n and n for an odd n.
func TestRounds(t *testing.T) {
	if Rounds(0) != nil || Rounds(1) != nil {
		t.Error("Rounds of fewer than 2 hosts, want nil")
	}
	for n := 2; n <= 40; n++ {
		rounds := Rounds(n)
		want := n - 1
		if n%2 == 1 {
			want = n
		}
		if len(rounds) != want {
			t.Errorf("n=%d: %d rounds, want %d", n, len(rounds), want)
		}
		met := map[[2]int]int{}
		for r, round := range rounds {
			busy := map[int]bool{}
			for _, p := range round {
				if p[0] >= p[1] || p[0] < 0 || p[1] >= n {
					t.Fatalf("n=%d round %d: pair %v", n, r, p)
				}
				if busy[p[0]] || busy[p[1]] {
					t.Errorf("n=%d round %d: a host of %v is in two pairs", n, r, p)
				}
				busy[p[0]], busy[p[1]] = true, true
				met[p]++
			}
		}
		if len(met) != n*(n-1)/2 {
			t.Errorf("n=%d: %d pairs met, want %d", n, len(met), n*(n-1)/2)
		}
		for p, c := range met {
			if c != 1 {
				t.Errorf("n=%d: pair %v met %d times", n, p, c)
			}
		}
	}
}

func TestHalvings(t *testing.T) {
	for _, tc := range []struct {
		n     int
		sizes [][]int // group sizes per level
	}{
		{3, nil},
		{4, [][]int{{2, 2}}},
		{8, [][]int{{4, 4}, {2, 2, 2, 2}}},
		{7, [][]int{{4, 3}, {2, 2}}},
		{16, [][]int{{8, 8}, {4, 4, 4, 4}, {2, 2, 2, 2, 2, 2, 2, 2}}},
	} {
		levels := Halvings(tc.n)
		if len(levels) != len(tc.sizes) {
			t.Fatalf("n=%d: %d levels, want %d", tc.n, len(levels), len(tc.sizes))
		}
		for l, level := range levels {
			seen := map[int]bool{}
			for g, group := range level {
				if len(group) != tc.sizes[l][g] {
					t.Errorf("n=%d level %d group %d: %d hosts, want %d", tc.n, l, g, len(group), tc.sizes[l][g])
				}
				for _, h := range group {
					if seen[h] {
						t.Errorf("n=%d level %d: host %d in two groups", tc.n, l, h)
					}
					seen[h] = true
				}
			}
		}
	}
}
