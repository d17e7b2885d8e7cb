package vmem

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"
)

// TestRegionShared: callers share the region's addresses, and it grows.
func TestRegionShared(t *testing.T) {
	var r Region
	if b, err := r.Get(0); b != nil || err != nil {
		t.Fatalf("Get(0) = %v, %v; want nil, nil", b, err)
	}
	a, errA := r.Get(1 << 20)
	b, errB := r.Get(4096)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if len(a) != 1<<20 || len(b) != 4096 || unsafe.SliceData(a) != unsafe.SliceData(b) {
		t.Fatalf("got lengths %d, %d at different addresses", len(a), len(b))
	}
	big, err := r.Get(1 << 36) // 64 GiB of address space, no memory
	if err != nil || len(big) != 1<<36 {
		t.Fatalf("got %d bytes, %v", len(big), err)
	}
}

// TestRegionSizes: a region stands for two buffers of the largest size a
// user may give (1 PiB each, which no machine's address space can
// reserve), and answers a size it cannot stand for with an error, not a
// panic.
func TestRegionSizes(t *testing.T) {
	const pib = 1 << 50
	tests := []struct {
		name string
		n    int
		err  bool
	}{
		{"a page", 4096, false},
		{"128 TiB, the whole of amd64's user space", 1 << 47, false},
		{"two buffers of 1 PiB", 2 * pib, false},
		{"an exabyte", 1 << 60, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.err && tc.n > 1<<40 && !holeKnown() {
				t.Skip("no hole in this architecture's address space: a reservation this large fails")
			}
			var r Region
			b, err := r.Get(tc.n)
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), "vmem: ") {
					t.Fatalf("got %d bytes, %v; want a vmem error", len(b), err)
				}
				return
			}
			if err != nil || len(b) != tc.n {
				t.Fatalf("got %d bytes, %v; want %d", len(b), err, tc.n)
			}
		})
	}
}

// TestRegionsApart: two regions never share addresses (an algorithm tells
// its in-place calls by their buffers' addresses).
func TestRegionsApart(t *testing.T) {
	var r1, r2 Region
	a, err1 := r1.Get(1 << 40)
	b, err2 := r2.Get(1 << 40)
	if err1 != nil || err2 != nil {
		t.Skip("no room for two reservations of 1 TiB:", err1, err2)
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a)) {
		t.Fatalf("regions overlap: %#x+%d and %#x+%d", pa, len(a), pb, len(b))
	}
}

// TestTouchCrashes: a read of a region's byte ends the process (here a
// child running this test) with a fault, rather than reading memory.
func TestTouchCrashes(t *testing.T) {
	if !Guarded {
		t.Skip("a touch is not guarded on this system")
	}
	if os.Getenv("VMEM_TOUCH") != "" {
		var r Region
		b, err := r.Get(1 << 30)
		if err != nil {
			t.Fatal(err)
		}
		println("read", b[len(b)/2]) // must fault
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTouchCrashes$")
	cmd.Env = append(os.Environ(), "VMEM_TOUCH=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "fault") {
		t.Fatalf("the touch did not fault: %v\n%s", err, out)
	}
}
