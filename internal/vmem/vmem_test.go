package vmem

import (
	"testing"
	"unsafe"
)

// TestRegionShared: callers share the region's addresses, and it grows.
func TestRegionShared(t *testing.T) {
	var r Region
	if r.Get(0) != nil {
		t.Fatal("Get(0) is not nil")
	}
	a, b := r.Get(1<<20), r.Get(4096)
	if len(a) != 1<<20 || len(b) != 4096 || unsafe.SliceData(a) != unsafe.SliceData(b) {
		t.Fatalf("got lengths %d, %d at different addresses", len(a), len(b))
	}
	big := r.Get(1 << 36) // 64 GiB of address space, no memory
	if len(big) != 1<<36 {
		t.Fatalf("got %d bytes", len(big))
	}
}
