//go:build !linux

package vmem

// reserve allocates n bytes on the Go heap, where untouched pages cost
// little on most systems; nothing guards them.
func reserve(n int) ([]byte, error) { return make([]byte, n), nil }

// Guarded reports whether a touch of a region's bytes crashes (here: no).
const Guarded = false
