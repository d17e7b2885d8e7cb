// Package units parses and formats the sizes and rates a user types: byte
// counts with binary suffixes (4K, 1.5M, 32G) and link bandwidths with units
// (64GB/s, 200Gbit/s), plus the named link presets. It sits apart from the
// harnesses so that the command, the sweep and the step scenarios read the
// same units, and it leans on internal/limits for the bounded parsing.
package units

import (
	"strconv"

	"github.com/hccl-test/hccl-test/internal/limits"
)

// MaxSize is the largest message size a plan accepts (limits.MaxSize):
// far beyond any machine's memory, and small enough that size arithmetic
// never overflows.
const MaxSize = limits.MaxSize

// ParseSize parses a byte count with an optional binary suffix, as
// nccl-tests and hccl_test accept it: 8, 1024, 4K, 1.5M, 1G, 2T (K = 1024;
// KB, KiB and lower case are accepted too), up to MaxSize. A fractional
// result is rounded down to a whole byte.
func ParseSize(s string) (int64, error) { return limits.Size(s) }

// FormatSize returns a short exact binary form of a size for names and
// labels, the form the result files use (results.FormatBinarySize): in the
// largest of KiB, MiB, GiB and TiB in which it is at least 1 with at most
// two decimals ("1KiB", "1.5MiB", "3GiB"), else in bytes ("1000B").
// Different sizes never format alike.
func FormatSize(bytes int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		unit := int64(1) << u.shift
		// Exact in two decimals: bytes*100 is a multiple of the unit.
		if bytes >= unit && (bytes%unit)*100%unit == 0 {
			return strconv.FormatFloat(float64(bytes)/float64(unit), 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatInt(bytes, 10) + "B"
}

// HumanSize returns n in binary units rounded for people to read: 23.1GiB.
func HumanSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return strconv.FormatInt(n, 10) + "B"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[u]
}

// LinkPreset is a named link bandwidth for --link-bw.
type LinkPreset struct {
	Name string
	GBps float64 // per rank, one direction, GB/s (1e9 bytes per second)
	What string  // what the figure is
}

// LinkPresets lists the named link bandwidths, nominal figures per rank and
// direction.
var LinkPresets = []LinkPreset{
	{"hccs", 56, "Huawei HCCS between Ascend NPUs, per link (HCCL's cost model figure)"},
	{"roce", 25, "RoCE NIC of 200 Gbit/s, one per NPU"},
	{"nvlink", 450, "NVLink 4 on H100, 900 GB/s bidirectional"},
	{"pcie4", 32, "PCIe 4.0 x16, per direction"},
	{"pcie5", 64, "PCIe 5.0 x16, per direction"},
	{"ib400", 50, "InfiniBand NDR or 400 Gbit/s Ethernet NIC"},
}

// ParseBandwidth parses a bandwidth with units into GB/s (1e9 bytes per
// second): 64GB/s, 25 GB/s, 200Gbit/s, 200Gb/s, 12.5GiB/s, 800MB/s,
// 1.2TB/s. Bytes are B, bits are b or bit. It refuses rates outside
// limits.MinRate to limits.MaxRate (1 B/s to 1 PB/s).
func ParseBandwidth(s string) (float64, error) {
	bps, err := limits.Rate(s)
	return bps / 1e9, err
}
