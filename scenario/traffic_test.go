package scenario

import (
	"testing"
)

// TestRoutedSteps: a dispatch and its combine of the same traffic carry
// one matrix and its transpose, their buffers hold the largest row and
// column, and the counts are the same in every parse (every process).
func TestRoutedSteps(t *testing.T) {
	file := []byte(`{"ranks": 4, "groups": "ep=4", "steps": [
		{"name": "dispatch", "group": "ep", "op": "alltoallv", "dtype": "bf16", "size": "64K", "traffic": "zipf:s=1.5,tokens=0,hidden=1024"},
		{"name": "combine", "group": "ep", "op": "alltoallv", "dtype": "bf16", "size": "64K", "traffic": "zipf:s=1.5,tokens=0,hidden=1024", "transpose": true},
		{"name": "gather", "group": "ep", "op": "allgatherv", "dtype": "fp32", "size": "64K", "traffic": "hot"}]}`)
	sc, err := Parse(file, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(file, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	d, c := sc.Steps[0].Counts, sc.Steps[1].Counts
	if d == nil || c == nil || sc.Steps[2].Counts == nil {
		t.Fatal("a routed step without counts")
	}
	if d.Digest() != again.Steps[0].Counts.Digest() {
		t.Error("two parses drew different counts")
	}
	var mostRow, mostCol int
	for s := range 4 {
		for r := range 4 {
			if d.At(s, r) != c.At(r, s) {
				t.Fatalf("combine's (%d, %d) = %d, dispatch's (%d, %d) = %d", r, s, c.At(r, s), s, r, d.At(s, r))
			}
		}
		mostRow, mostCol = max(mostRow, d.Sent(s)), max(mostCol, d.Received(s))
	}
	if d.Received(0) <= d.Received(3) {
		t.Errorf("zipf's first expert's rank received %d, the last's %d: want more", d.Received(0), d.Received(3))
	}
	send, recv := sc.Steps[0].BufferBytes(4)
	if send != int64(2*mostRow) || recv != int64(2*mostCol) {
		t.Errorf("buffers (%d, %d), want the largest row and column in bytes (%d, %d)", send, recv, 2*mostRow, 2*mostCol)
	}
}
