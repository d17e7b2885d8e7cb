package vmem

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// reserve maps n bytes that may not be accessed and that count against no
// memory limit (PROT_NONE, MAP_NORESERVE).
func reserve(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("vmem: reserving %d bytes of address space: %w", n, err)
	}
	return b, nil
}

// Guarded reports whether a touch of a region's bytes crashes (on Linux:
// yes).
const Guarded = true
