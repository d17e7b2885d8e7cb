//go:build !linux

package vmem

import "fmt"

// maxHeap is the most reserve takes from the Go heap: past it, make would
// end the process rather than fail.
const maxHeap = 1 << 40

// reserve allocates n bytes on the Go heap, where untouched pages cost
// little on most systems; nothing guards them.
func reserve(n int) ([]byte, error) {
	if n > maxHeap {
		return nil, fmt.Errorf("more than the %d bytes this system can stand in for", maxHeap)
	}
	return make([]byte, n), nil
}

// Guarded reports whether a touch of a region's bytes crashes (here: no).
const Guarded = false
