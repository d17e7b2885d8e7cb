package units

import (
	"math"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "0", want: 0},
		{in: "8", want: 8},
		{in: "1024", want: 1024},
		{in: "1K", want: 1024},
		{in: "1k", want: 1024},
		{in: "4KB", want: 4096},
		{in: "4KiB", want: 4096},
		{in: "1.5M", want: 3 << 19},
		{in: "256M", want: 256 << 20},
		{in: "268435456", want: 268435456},
		{in: "2G", want: 2 << 30},
		{in: "1T", want: 1 << 40},
		{in: "100B", want: 100},
		{in: "0.5K", want: 512},
		{in: "1.0001K", want: 1024}, // rounded down to whole bytes
		{in: "", bad: true},
		{in: "K", bad: true},
		{in: "abc", bad: true},
		{in: "-1", bad: true},
		{in: "1Q", bad: true},
		{in: "0x10", bad: true},
		{in: "1e300", bad: true},
		{in: "2000T", bad: true}, // over MaxSize
		{in: "NaN", bad: true},
	}
	for _, tc := range tests {
		got, err := ParseSize(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		in   string
		want float64 // GB/s
		bad  bool
	}{
		{in: "64GB/s", want: 64},
		{in: "25 GB/s", want: 25},
		{in: "200Gbit/s", want: 25},
		{in: "200Gb/s", want: 25},
		{in: "100Gbps", want: 12.5},
		{in: "800MB/s", want: 0.8},
		{in: "1.2TB/s", want: 1200},
		{in: "1GiB/s", want: 1.073741824},
		{in: "64GB", bad: true},
		{in: "64", bad: true},
		{in: "GB/s", bad: true},
		{in: "0GB/s", bad: true},
		{in: "5XB/s", bad: true},
		{in: "5Gq/s", bad: true},
	}
	for _, tc := range tests {
		got, err := ParseBandwidth(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseBandwidth(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("ParseBandwidth(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0B", 1000: "1000B", 1024: "1KiB", 1536: "1.5KiB", 1025: "1025B",
		32 << 20: "32MiB", 256 << 20: "256MiB", 3 << 30: "3GiB",
	} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestPresetsAreDocumented(t *testing.T) {
	for _, name := range []string{"hccs", "roce", "nvlink", "pcie4"} {
		found := false
		for _, p := range LinkPresets {
			found = found || (p.Name == name && p.GBps > 0 && p.What != "")
		}
		if !found {
			t.Errorf("preset %q missing or incomplete", name)
		}
	}
}
