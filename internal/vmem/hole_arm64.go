//go:build linux

package vmem

// On arm64 Linux ignores an address's top byte (bits 56 to 63) and maps
// user addresses below 2^52 at most; an address with a bit from 52 to 54
// set, bit 55 clear, faults whatever is mapped. Windows of 4 PiB from
// 2^52 stay inside that hole.
const (
	holeBase   = 1 << 52
	holeWindow = 1 << 52
	holeCount  = 7
)
