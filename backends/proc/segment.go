package proc

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// segment is memory that the ranks of one host can share: a memfd, sized
// once before it is mapped and never truncated (so no mapping of it can
// fault), mapped here and, on demand, in the processes of the other ranks,
// which open it through /proc/PID/fd/FD. A memfd lives as long as a
// descriptor or a mapping refers to it: a rank that dies, even by SIGKILL,
// leaves nothing behind.
type segment struct {
	id   uint64 // unique in this process, never reused
	fd   int
	mem  []byte // the n bytes asked for
	full []byte // the whole mapping: whole pages
	base uintptr
}

// segments is every segment of this process, sorted by address, so that a
// send finds the segment that holds its buffer.
var segments struct {
	mu   sync.RWMutex // guards list
	list []*segment
}

// nextSegID numbers the segments of this process.
var nextSegID atomic.Uint64

// sharedBytes is the size of every segment of this process: the shared
// memory it owns, which the resident-memory guard counts (other ranks'
// segments that it maps are theirs to count).
var sharedBytes atomic.Int64

// pageSize is the granule of mappings.
var pageSize = os.Getpagesize()

// newSegment creates a segment of at least n bytes (whole pages) and
// registers it.
func newSegment(n int, name string) (*segment, error) {
	size := (max(n, 1) + pageSize - 1) &^ (pageSize - 1)
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("creating shared memory of %d bytes: memfd_create: %w", size, err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sizing shared memory to %d bytes: %w", size, err)
	}
	mem, err := mapShared(fd, size, unix.PROT_READ|unix.PROT_WRITE, 0)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("mapping %d bytes of shared memory: %w", size, err)
	}
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // advice only
	collapse(mem)
	s := &segment{id: nextSegID.Add(1), fd: fd, mem: mem[:n:n], full: mem, base: uintptr(unsafe.Pointer(&mem[0]))}
	sharedBytes.Add(int64(size))
	segments.mu.Lock()
	i, _ := slices.BinarySearchFunc(segments.list, s.base, func(x *segment, b uintptr) int { return cmp.Compare(x.base, b) })
	segments.list = slices.Insert(segments.list, i, s)
	segments.mu.Unlock()
	return s, nil
}

// mapped is the length of the segment's mapping: whole pages.
func (s *segment) mapped() int { return len(s.full) }

// free unregisters the segment, unmaps it here and closes its descriptor.
// Peers that mapped it keep their mappings, and with them its memory,
// until they unmap it.
func (s *segment) free() {
	segments.mu.Lock()
	if i := slices.Index(segments.list, s); i >= 0 {
		segments.list = slices.Delete(segments.list, i, i+1)
	}
	segments.mu.Unlock()
	unmap(s.full)
	sharedBytes.Add(-int64(len(s.full)))
	unix.Close(s.fd)
}

// findSegment returns the segment that holds all of buf and buf's offset
// in it; nil when buf is not in shared memory (the Go heap, say).
func findSegment(buf []byte) (*segment, int) {
	if len(buf) == 0 {
		return nil, 0
	}
	p := uintptr(unsafe.Pointer(&buf[0]))
	segments.mu.RLock()
	defer segments.mu.RUnlock()
	i, found := slices.BinarySearchFunc(segments.list, p, func(x *segment, b uintptr) int { return cmp.Compare(x.base, b) })
	if !found {
		i-- // the last segment that starts below p
	}
	if i < 0 {
		return nil, 0
	}
	s := segments.list[i]
	off := int(p - s.base)
	if off+len(buf) > len(s.mem) {
		return nil, 0
	}
	return s, off
}

// allocShared is the allocator (hugemem.SetAllocator) that proc's rank
// processes install: the harness's buffers and the algorithms' scratch
// space live in segments, so a receiver reads them where they are.
func allocShared(n int) ([]byte, func(), error) {
	if n == 0 {
		return nil, func() {}, nil
	}
	s, err := newSegment(n, "hccl-test-buf")
	if err != nil {
		return nil, nil, err
	}
	return s.mem, s.free, nil
}

// mapPeer maps the segment that process pid holds as descriptor fd, of
// size bytes, read-only or writable. The descriptor is opened through
// /proc, and closed once mapped: the mapping keeps the memory.
func mapPeer(pid, fd, size int, writable bool) ([]byte, error) {
	path := fmt.Sprintf("/proc/%d/fd/%d", pid, fd)
	flags, prot := unix.O_RDONLY, unix.PROT_READ
	if writable {
		flags, prot = unix.O_RDWR, unix.PROT_READ|unix.PROT_WRITE
	}
	f, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the shared memory of process %d (%s): %w", pid, path, err)
	}
	defer unix.Close(f)
	var st unix.Stat_t
	if err := unix.Fstat(f, &st); err != nil {
		return nil, fmt.Errorf("shared memory of process %d: %w", pid, err)
	}
	if st.Size < int64(size) {
		return nil, fmt.Errorf("shared memory of process %d is %d bytes, not the %d it announced", pid, st.Size, size)
	}
	mem, err := mapShared(f, size, prot, unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mapping %d bytes of the shared memory of process %d: %w", size, pid, err)
	}
	return mem, nil
}

// Alloc allocates n bytes of shared memory, as the backend's rank
// processes allocate the harness's buffers: a send from them reaches a
// receiver of the same host without a copy into a staging segment. The
// returned function frees them. Tests and benchmarks that drive a
// NewLocalWorld use it for their buffers, and with hugemem.SetAllocator
// for the algorithms' scratch space.
func Alloc(n int) ([]byte, func(), error) { return allocShared(n) }
