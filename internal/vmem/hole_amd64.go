//go:build linux

package vmem

// On amd64 an address is canonical only if its bits from 47 (57 with
// five-level paging) up are all equal; any other address faults whatever is
// mapped. Windows of 64 PiB from 2^58 stay far inside that hole.
const (
	holeBase   = 1 << 58
	holeWindow = 1 << 56
	holeCount  = 16
)
