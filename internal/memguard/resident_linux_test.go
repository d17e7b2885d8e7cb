package memguard

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestResidentCountsSharedOnce maps one 256 MiB memfd three times in this
// process and touches every page through each mapping: the kernel's
// resident size counts the pages three times, the memory taken is once,
// and Resident must say so once SetOwnShared has said the memfd is this
// process's own (as proc's ranks map each other's buffers).
func TestResidentCountsSharedOnce(t *testing.T) {
	const size = 256 << 20
	fd, err := unix.MemfdCreate("memguard-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skipf("memfd_create: %v", err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, size); err != nil {
		t.Fatal(err)
	}
	defer SetOwnShared(func() int64 { return size })()
	before, err := Resident()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		m, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(m)
		for i := 0; i < size; i += 4096 {
			m[i] = 1
		}
	}
	after, err := Resident()
	if err != nil {
		t.Fatal(err)
	}
	// Before the mappings the memfd counted already (as its owner says),
	// so the growth is of the private pages alone: near nothing.
	if grew := after - before; grew > size/4 {
		t.Errorf("resident size grew by %d MiB for %d MiB of this process's own shared memory mapped three times, want under %d",
			grew>>20, size>>20, size>>22)
	}
}
