//go:build !linux

package hugemem

// alloc allocates n bytes on the Go heap; the returned function does
// nothing (the garbage collector frees them).
func alloc(n int) ([]byte, func(), error) {
	return make([]byte, n), func() {}, nil
}
