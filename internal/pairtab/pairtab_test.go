package pairtab

import (
	"sort"
	"sync"
	"testing"
)

// TestTable: a pair is made once, whoever asks first and however (the
// table, either rank's cache), concurrently; Into sees exactly the pairs
// made into a rank.
func TestTable(t *testing.T) {
	const n = 64
	made := 0
	var mu sync.Mutex
	tab := New(n, func() *int {
		mu.Lock()
		defer mu.Unlock()
		made++
		v := made
		return &v
	})
	// Each rank sends to its ring successor and to rank 0, concurrently,
	// and looks up what it receives from its predecessor.
	got := make([][3]*int, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			c := tab.Cache(r)
			got[r] = [3]*int{c.Out((r + 1) % n), c.Out(0), c.In((r + n - 1) % n)}
			if c.Out((r+1)%n) != got[r][0] || c.In((r+n-1)%n) != got[r][2] {
				t.Errorf("rank %d: a second look-up returned another pair", r)
			}
		})
	}
	wg.Wait()
	for r := range n {
		if got[r][0] != tab.Get(r, (r+1)%n) || got[(r+1)%n][2] != got[r][0] {
			t.Fatalf("rank %d: the sender's, the receiver's and the table's pair differ", r)
		}
	}
	var into0 []int
	tab.Into(0, func(src int, _ *int) { into0 = append(into0, src) })
	sort.Ints(into0)
	if len(into0) != n || into0[0] != 0 || into0[n-1] != n-1 { // rank 0's own (0, 0) too
		t.Errorf("pairs into rank 0 from %v, want 0..%d", into0, n-1)
	}
	var into5 []int
	tab.Into(5, func(src int, _ *int) { into5 = append(into5, src) })
	if len(into5) != 1 || into5[0] != 4 {
		t.Errorf("pairs into rank 5 from %v, want [4]", into5)
	}
	// n ring pairs and n-1 more into rank 0 (rank n-1's is a ring pair).
	if want := n + n - 1; made != want {
		t.Errorf("%d pairs made, want %d", made, want)
	}
}
