package proc

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page (x86-64's PMD). A
// segment of at least this size is mapped, here and by its peers, at an
// address aligned to it, and its pages are collapsed into huge pages:
// copying out of a peer's buffer and into one's own then walks one page
// table entry per 2 MiB instead of 512, which on a virtual machine (two
// levels of page tables) costs a third of the CPU time of a large copy.
// shm's buffers, private memory, get huge pages from the kernel
// (hugemem); shared memory gets them only where the host allows it
// (transparent_hugepage/shmem_enabled, usually never), or by
// MADV_COLLAPSE, which ignores that setting but acts only on whole,
// aligned huge pages whose small pages are present.
const hugePage = 2 << 20

// mapShared maps size bytes of the file fd from its start, shared, with
// prot: at an address aligned to hugePage when size is at least that (so
// that the kernel can map huge pages there), anywhere otherwise. Free the
// mapping with unmap.
func mapShared(fd, size, prot, flags int) ([]byte, error) {
	if size < hugePage {
		p, err := unix.MmapPtr(fd, 0, nil, uintptr(size), prot, flags|unix.MAP_SHARED)
		if err != nil {
			return nil, err
		}
		return unsafe.Slice((*byte)(p), size), nil
	}
	// Reserve room for an aligned mapping, place it, and give back the
	// slack on both sides.
	span := uintptr(size + hugePage)
	res, err := unix.MmapPtr(-1, 0, nil, span, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	lead := (hugePage - uintptr(res)%hugePage) % hugePage
	at := unsafe.Add(res, lead)
	p, err := unix.MmapPtr(fd, 0, at, uintptr(size), prot, flags|unix.MAP_SHARED|unix.MAP_FIXED)
	if err != nil {
		_ = unix.MunmapPtr(res, span)
		return nil, err
	}
	if lead > 0 {
		_ = unix.MunmapPtr(res, lead)
	}
	if tail := span - lead - uintptr(size); tail > 0 {
		_ = unix.MunmapPtr(unsafe.Add(at, size), tail)
	}
	return unsafe.Slice((*byte)(p), size), nil
}

// unmap frees a mapping made by mapShared.
func unmap(b []byte) {
	if len(b) > 0 {
		_ = unix.MunmapPtr(unsafe.Pointer(&b[0]), uintptr(len(b)))
	}
}

// collapse asks for the whole aligned huge pages of mem, a new segment's
// mapping, to be huge (MADV_COLLAPSE). The kernel collapses only ranges
// that have a page present, so it first touches one small page of each
// (the segment is new: it writes the zero that is there); the collapse
// fills in the rest, which costs a few milliseconds for 64 MiB where
// making every small page present first and copying them over costs a
// hundred. Advice only: on a kernel without MADV_COLLAPSE (before Linux
// 6.1), or short of free huge pages, the memory keeps small pages.
func collapse(mem []byte) {
	n := len(mem) &^ (hugePage - 1)
	if n == 0 || uintptr(unsafe.Pointer(&mem[0]))%hugePage != 0 {
		return
	}
	for off := 0; off < n; off += hugePage {
		mem[off] = 0
	}
	_ = unix.Madvise(mem[:n], unix.MADV_COLLAPSE)
}
