// Package vmem hands out buffers that no memory backs, for contents nobody
// reads or writes: the payload of calls that carry lengths only
// (coll.Comm.SetNoPayload, --sim-data=false). A touch of one crashes the
// process at once, which catches any access to a payload that was supposed
// to be skipped.
//
// Where the hardware has a hole in its address space that no mapping can
// ever enter (linux/amd64: the non-canonical addresses; linux/arm64: the
// addresses above the largest virtual address, below the ignored top
// byte), a buffer is a window of that hole: nothing is reserved, so even
// two buffers of the largest size a user may give (1 PiB) cost nothing and
// count against no limit (RLIMIT_AS, a cgroup). Elsewhere a buffer is a
// reservation of address space (PROT_NONE, MAP_NORESERVE on Linux), which
// can fail; Get then returns the error.
package vmem

import (
	"fmt"
	"sync"
)

// Region is a process-wide stand-in for buffers, grown on demand. Every
// caller of Get gets slices of the same addresses, so many ranks share one
// region at no cost; two Regions never share addresses. A zero Region is
// ready to use; it is safe for concurrent use.
type Region struct {
	mu sync.Mutex
	b  []byte // guarded by mu: the addresses handed out, at least as long as any Get asked
}

// Get returns n bytes of the region, growing it first if it is smaller,
// or an error if it cannot stand for n bytes. The bytes must never be read
// or written. An old reservation is never released when the region grows
// (slices of it may still be in use); it takes address space only.
func (r *Region) Get(n int) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.b) < n {
		b, err := reserve(max(n, 2*len(r.b)))
		if err != nil {
			return nil, fmt.Errorf("vmem: %d bytes that no memory backs: %w", n, err)
		}
		r.b = b
	}
	return r.b[:n:n], nil
}
