package freelist

import "testing"

func TestPop(t *testing.T) {
	a, b := new(int), new(int)
	l := []*int{a, b}
	for _, want := range []*int{b, a, nil} {
		if got := Pop(&l); got != want {
			t.Fatalf("Pop = %p, want %p", got, want)
		}
	}
	if cap(l) != 2 || l[:2][0] != nil || l[:2][1] != nil {
		t.Errorf("popped slots keep %v, want them cleared", l[:2])
	}
}
