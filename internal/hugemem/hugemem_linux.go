package hugemem

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// alloc maps n bytes of anonymous memory outside the Go heap and advises
// the kernel to back it with transparent huge pages. The returned function
// unmaps it; the bytes must not be used after that.
func alloc(n int) ([]byte, func(), error) {
	if n == 0 {
		return nil, func() {}, nil
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("allocating a %d-byte buffer: %w", n, err)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only: fine if refused
	return b, func() { _ = unix.Munmap(b) }, nil
}
