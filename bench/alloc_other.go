//go:build !linux

package bench

// allocBuffer allocates n bytes on the Go heap.
func allocBuffer(n int) ([]byte, func(), error) {
	return make([]byte, n), func() {}, nil
}
