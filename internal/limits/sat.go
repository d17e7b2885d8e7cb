package limits

import "math"

// SatAdd and SatMul add and multiply non-negative counts, saturating at
// math.MaxInt64 instead of wrapping.
func SatAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// SatMul multiplies like SatAdd adds.
func SatMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
