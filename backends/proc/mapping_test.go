package proc

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pmdMappedKiB returns the ShmemPmdMapped of this process's mapping that
// starts at mem (/proc/self/smaps): how much of it huge pages map.
func pmdMappedKiB(t *testing.T, mem []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&mem[0])))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) >= 5 && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(line, start) // a mapping's first line: its address range, ...
			continue
		}
		var kib int
		if in && strings.HasPrefix(line, "ShmemPmdMapped:") {
			fmt.Sscanf(strings.TrimPrefix(line, "ShmemPmdMapped:"), "%d", &kib)
			return kib
		}
	}
	t.Fatalf("no mapping at %s in smaps", start)
	return 0
}

// collapseWorks reports whether this kernel collapses a shared mapping's
// pages into huge pages (MADV_COLLAPSE, Linux 6.1 and later, with free
// huge pages).
func collapseWorks(t *testing.T) bool {
	t.Helper()
	fd, err := unix.MemfdCreate("probe", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, hugePage); err != nil {
		t.Fatal(err)
	}
	mem, err := mapShared(fd, hugePage, unix.PROT_READ|unix.PROT_WRITE, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap(mem)
	mem[0] = 1
	return unix.Madvise(mem, unix.MADV_COLLAPSE) == nil
}

// TestSegmentsHugePages checks that a segment of a few huge pages is
// mapped at an address aligned to them, by its owner and by a peer that
// maps it (mapPeer), and, where the kernel collapses shared memory, that
// huge pages map all of it in both; a small one is mapped as it was.
func TestSegmentsHugePages(t *testing.T) {
	tests := []struct {
		name string
		size int
		huge bool
	}{
		{"small", 64 << 10, false},
		{"one huge page", hugePage, true},
		{"4 MiB and a page", 2*hugePage + 4096, true},
	}
	collapses := collapseWorks(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newSegment(tc.size, "hccl-test-huge")
			if err != nil {
				t.Fatal(err)
			}
			defer s.free()
			peer, err := mapPeer(os.Getpid(), s.fd, s.mapped(), false)
			if err != nil {
				t.Fatal(err)
			}
			defer unmap(peer)
			s.mem[len(s.mem)-1] = 7
			if peer[len(s.mem)-1] != 7 {
				t.Fatalf("the peer's mapping does not see the owner's write")
			}
			for _, m := range []struct {
				who string
				mem []byte
			}{{"owner", s.full}, {"peer", peer}} {
				aligned := uintptr(unsafe.Pointer(&m.mem[0]))%hugePage == 0
				if tc.huge && !aligned {
					t.Errorf("%s: %d bytes mapped at %p, not aligned to %d", m.who, len(m.mem), &m.mem[0], hugePage)
				}
				if !tc.huge || !collapses {
					continue
				}
				if got, want := pmdMappedKiB(t, m.mem), (tc.size&^(hugePage-1))>>10; got != want {
					t.Errorf("%s: %d KiB of %d mapped by huge pages, want %d", m.who, got, len(m.mem)>>10, want)
				}
			}
		})
	}
	if !collapses {
		t.Log("this kernel does not collapse shared memory into huge pages: alignment checked only")
	}
}
