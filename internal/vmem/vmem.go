// Package vmem hands out address space that no memory backs, for buffers
// whose contents nobody reads or writes: the payload of calls that carry
// lengths only (coll.Comm.SetNoPayload, --sim-data=false). On Linux it is
// a PROT_NONE mapping, so a touch of it crashes the process at once, which
// catches any access to a payload that was supposed to be skipped.
package vmem

import "sync"

// Region is a process-wide reservation grown on demand. Every caller of
// Get gets slices of the same addresses, so many ranks share one region
// at no cost. A zero Region is ready to use; it is safe for concurrent use.
type Region struct {
	mu sync.Mutex
	b  []byte
}

// Get returns n bytes of the region, growing it first if it is smaller.
// The bytes must never be read or written. An old reservation is never
// released when the region grows (slices of it may still be in use); it
// takes address space only.
func (r *Region) Get(n int) []byte {
	if n <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.b) < n {
		b, err := reserve(max(n, 2*len(r.b)))
		if err != nil {
			panic(err) // address space for a reservation that backs nothing: not expected to fail
		}
		r.b = b
	}
	return r.b[:n:n]
}
