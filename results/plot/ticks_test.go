package plot

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

// labels returns the labels of the major ticks, and checks that the ticks
// are in order and inside the range.
func labels(t *testing.T, ts []plot.Tick, lo, hi float64) []string {
	t.Helper()
	var out []string
	for i, tk := range ts {
		if tk.Value < lo || tk.Value > hi*(1+1e-12) || (i > 0 && tk.Value <= ts[i-1].Value) {
			t.Errorf("tick %d at %v: out of order or outside [%v, %v]", i, tk.Value, lo, hi)
		}
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

func TestSizeTicks(t *testing.T) {
	for _, c := range []struct {
		name     string
		min, max float64
		ticks    int
		want     []string
	}{
		{"1K to 64M, padded as Write pads: every other power", 1024 / math.Sqrt2, 64 << 20 * math.Sqrt2, 17,
			[]string{"1K", "4K", "16K", "64K", "256K", "1M", "4M", "16M", "64M"}},
		{"few sizes: every power", 1000, 40000, 6, []string{"1K", "2K", "4K", "8K", "16K", "32K"}},
		{"8 B to 16 GiB: every fifth", 8, 16 << 30, 32, []string{"32", "1K", "32K", "1M", "32M", "1G"}},
		{"one size", 4096 / math.Sqrt2, 4096 * math.Sqrt2, 1, []string{"4K"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := sizeTicks{}.Ticks(c.min, c.max)
			got := labels(t, ts, c.min, c.max)
			if !slices.Equal(got, c.want) {
				t.Errorf("labels %q, want %q", got, c.want)
			}
			if len(ts) != c.ticks {
				t.Errorf("%d ticks, want one per power of two: %d", len(ts), c.ticks)
			}
			if len(got) > maxLabels {
				t.Errorf("%d labels, more than %d", len(got), maxLabels)
			}
		})
	}
}

func TestSizeLabel(t *testing.T) {
	for e, want := range map[int]string{0: "1", 9: "512", 10: "1K", 12: "4K", 19: "512K", 20: "1M", 30: "1G", 42: "4T", -1: "0.5"} {
		if got := sizeLabel(e); got != want {
			t.Errorf("sizeLabel(%d) = %q, want %q", e, got, want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	for _, c := range []struct {
		name     string
		min, max float64
		want     []string
	}{
		{"four decades: powers of ten", 60, 250000, []string{"100", "1000", "10000", "100000"}},
		{"one decade: 1, 2, 5", 60, 900, []string{"100", "200", "500"}},
		{"two and a half decades: 1, 2, 5", 150, 40000, []string{"200", "500", "1000", "2000", "5000", "10000", "20000"}},
		{"below a microsecond", 0.15, 3, []string{"0.2", "0.5", "1", "2"}},
		{"fifteen decades: every other", 1e-3, 1e12, []string{"0.01", "1", "100", "10000", "1000000", "100000000", "10000000000", "1000000000000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := labels(t, timeTicks{}.Ticks(c.min, c.max), c.min, c.max)
			if !slices.Equal(got, c.want) {
				t.Errorf("labels %q, want %q", got, c.want)
			}
		})
	}
}

func TestLinearTicks(t *testing.T) {
	for _, c := range []struct {
		name     string
		min, max float64
		want     []string
	}{
		{"steps of 0.5", 0, 1.85, []string{"0.0", "0.5", "1.0", "1.5"}},
		{"steps of 0.2", 0, 0.9, []string{"0.0", "0.2", "0.4", "0.6", "0.8"}},
		{"steps of 2.5", 0, 14, []string{"0.0", "2.5", "5.0", "7.5", "10.0", "12.5"}},
		{"steps of 25", 0, 140, []string{"0", "25", "50", "75", "100", "125"}},
		{"steps of 10", 0, 45, []string{"0", "10", "20", "30", "40"}},
		{"not from 0", 3, 9, []string{"3", "4", "5", "6", "7", "8", "9"}},
		{"empty range", 2, 2, []string{"2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := labels(t, linearTicks{}.Ticks(c.min, c.max), c.min, c.max)
			if !slices.Equal(got, c.want) {
				t.Errorf("labels %q, want %q", got, c.want)
			}
		})
	}
}
