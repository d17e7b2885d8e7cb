package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hccl-test/hccl-test/results"
)

// MaxSize is the largest message size a plan accepts: far beyond any
// machine's memory, and small enough that size arithmetic never overflows.
const MaxSize = 1 << 50

// ParseSize parses a byte count with an optional binary suffix, as
// nccl-tests and hccl_test accept it: 8, 1024, 4K, 1.5M, 1G, 2T (K = 1024;
// KB, KiB and lower case are accepted too). A fractional result is rounded
// down to a whole byte.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num, mult := t, 1.0
	lower := strings.ToLower(t)
	for _, suf := range []struct {
		text string
		mult float64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
		{"b", 1},
	} {
		if strings.HasSuffix(lower, suf.text) {
			num, mult = strings.TrimSpace(t[:len(t)-len(suf.text)]), suf.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" || strings.ContainsAny(num, "xXpP_") {
		return 0, fmt.Errorf("size %q: not a number with an optional K/M/G/T suffix", s)
	}
	v *= mult
	switch {
	case math.IsNaN(v) || v < 0:
		return 0, fmt.Errorf("size %q: must not be negative", s)
	case v > MaxSize:
		return 0, fmt.Errorf("size %q: larger than the limit of %d bytes", s, int64(MaxSize))
	}
	return int64(v), nil
}

// FormatSize returns a short exact binary form of n for names and labels
// (1KiB, 1.5MiB, 3GiB, or 1000B), the form the result files use.
func FormatSize(n int64) string { return results.FormatBinarySize(n) }

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
// 1.2TB/s. Bytes are B, bits are b or bit.
func ParseBandwidth(s string) (float64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if i <= 0 {
		return 0, fmt.Errorf("bandwidth %q: want a number with units such as 64GB/s or 200Gbit/s", s)
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("bandwidth %q: %v", s, err)
	}
	unit := strings.TrimSpace(t[i:])
	unit, ok := strings.CutSuffix(unit, "/s")
	if !ok {
		unit, ok = strings.CutSuffix(unit, "ps")
	}
	if !ok {
		return 0, fmt.Errorf("bandwidth %q: units must end in /s (64GB/s, 200Gbit/s)", s)
	}
	scale := map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
	var bits bool
	switch {
	case strings.HasSuffix(unit, "bit"):
		unit, bits = strings.TrimSuffix(unit, "bit"), true
	case strings.HasSuffix(unit, "b"):
		unit, bits = strings.TrimSuffix(unit, "b"), true
	case strings.HasSuffix(unit, "B"):
		unit = strings.TrimSuffix(unit, "B")
	default:
		return 0, fmt.Errorf("bandwidth %q: unit must be bytes (B) or bits (b, bit) per second", s)
	}
	m, ok := scale[unit]
	if !ok {
		return 0, fmt.Errorf("bandwidth %q: unknown prefix %q", s, unit)
	}
	bps := v * m
	if bits {
		bps /= 8
	}
	if bps <= 0 || math.IsInf(bps, 0) {
		return 0, fmt.Errorf("bandwidth %q: must be positive", s)
	}
	return bps / 1e9, nil
}
