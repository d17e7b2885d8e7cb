package vmem

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// reserve returns at least n bytes that may not be accessed: a window of
// the address space's hole where the architecture has one (hole), or else a
// mapping that counts against no memory limit (PROT_NONE, MAP_NORESERVE).
func reserve(n int) ([]byte, error) {
	if b := hole(n); b != nil {
		return b, nil
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("reserving %d bytes of address space: %w", n, err)
	}
	return b, nil
}

// Guarded reports whether a touch of a region's bytes crashes (on Linux:
// yes).
const Guarded = true
