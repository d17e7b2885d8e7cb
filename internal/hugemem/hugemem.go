// Package hugemem allocates large buffers outside the Go heap, advised for
// transparent huge pages where the kernel leaves that to the program
// (/sys/kernel/mm/transparent_hugepage/enabled set to madvise, as on many
// distributions). Fresh 4 KiB pages cost about 11 us each to fault in on
// these machines, more than copying them, and a buffer of 4 KiB pages
// misses the TLB far more often than one of 2 MiB pages: the message
// buffers, and the scratch space of the algorithms that copy through one,
// are what a collective's time is made of.
package hugemem

import "sync/atomic"

// Allocator allocates n bytes outside the Go heap and returns them with the
// function that frees them, as Alloc does.
type Allocator func(n int) ([]byte, func(), error)

// hook is the allocator installed by SetAllocator, nil for the default.
var hook atomic.Pointer[Allocator]

// SetAllocator makes Alloc call a, in the whole process, until the returned
// function puts the previous allocator back. A backend whose rank processes
// read each other's buffers (proc) installs one that allocates memory its
// peers can map, so that the harness's buffers and the algorithms' scratch
// space need no copy to be sent.
func SetAllocator(a Allocator) (restore func()) {
	prev := hook.Swap(&a)
	return func() { hook.Store(prev) }
}

// Alloc allocates n bytes outside the Go heap: through the allocator that
// SetAllocator installed, or as the platform allows (advised for huge pages
// on Linux). The returned function frees them; the bytes must not be used
// after that.
func Alloc(n int) ([]byte, func(), error) {
	if a := hook.Load(); a != nil {
		return (*a)(n)
	}
	return alloc(n)
}
