//go:build !amd64

package dtype

// simdTable returns an empty table: the SIMD kernels exist for amd64 only
// (reduce_amd64.go), so every platform else runs the portable kernels.
func simdTable(*kernelTable) (t kernelTable) { return t }
