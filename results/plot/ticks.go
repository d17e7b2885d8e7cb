package plot

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// maxLabels is about how many labelled ticks fit along an axis of the plots
// without their labels running into each other.
const maxLabels = 12

// sizeTicks puts a tick at every power of two on a log axis of sizes in
// bytes, and labels every 1st, 2nd, 5th or 10th of them in binary units
// (1K = 1024): every 2nd gives 1K 4K 16K 64K 256K 1M ..., every 10th
// 1K 1M 1G. The step is the smallest that keeps the labels to maxLabels.
// plot.LogTicks would put them at powers of ten, which no message size is.
type sizeTicks struct{}

// Ticks implements plot.Ticker.
func (sizeTicks) Ticks(vmin, vmax float64) []plot.Tick {
	lo, hi := int(math.Ceil(math.Log2(vmin))), int(math.Floor(math.Log2(vmax)))
	step := 10
	for _, s := range []int{1, 2, 5, 10} {
		if (hi-lo)/s+1 <= maxLabels {
			step = s
			break
		}
	}
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		t := plot.Tick{Value: math.Exp2(float64(e))}
		if e%step == 0 {
			t.Label = sizeLabel(e)
		}
		ts = append(ts, t)
	}
	return ts
}

// sizeLabel formats 2^e bytes briefly: 1, 2, ... 512, 1K, ... 512K, 1M, ...
func sizeLabel(e int) string {
	if e < 0 {
		return strconv.FormatFloat(math.Exp2(float64(e)), 'g', -1, 64)
	}
	const units = "KMGTPE"
	u := min(e/10, len(units))
	s := strconv.FormatInt(int64(1)<<(e-10*u), 10)
	if u > 0 {
		s += units[u-1 : u]
	}
	return s
}

// timeTicks puts ticks on a log axis at 1, 2, ... 9 times each power of
// ten. It labels the powers of ten, and also the 2s and 5s when the axis
// spans less than three decades, so that a short axis gets labels too; over
// more than maxLabels decades it labels every other one.
type timeTicks struct{}

// Ticks implements plot.Ticker.
func (timeTicks) Ticks(vmin, vmax float64) []plot.Tick {
	lo, hi := int(math.Floor(math.Log10(vmin))), int(math.Ceil(math.Log10(vmax)))
	decades := math.Log10(vmax / vmin)
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		pow := math.Pow10(e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * pow
			if v < vmin || v > vmax {
				continue
			}
			t := plot.Tick{Value: v}
			switch {
			case m == 1 && (decades <= maxLabels || e%2 == 0),
				decades < 3 && (m == 2 || m == 5):
				t.Label = strconv.FormatFloat(v, 'f', max(-e, 0), 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// linearTicks labels a linear axis at about maxLabels/2 round values (1, 2,
// 2.5 or 5 times a power of ten apart), with an unlabelled tick between
// each two. plot.DefaultTicks labels only about three.
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(vmin, vmax float64) []plot.Tick {
	if !(vmax > vmin) {
		return []plot.Tick{{Value: vmin, Label: strconv.FormatFloat(vmin, 'g', 4, 64)}}
	}
	raw := (vmax - vmin) / (maxLabels / 2)
	pow := math.Pow10(int(math.Floor(math.Log10(raw))))
	step := 10 * pow
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*pow >= raw {
			step = m * pow
			break
		}
	}
	// Enough decimals for the step: 0.2 needs one, 0.25 two, 25 none.
	digits := -int(math.Floor(math.Log10(step) + 1e-9))
	if math.Abs(step/pow-2.5) < 1e-9 {
		digits++
	}
	prec := max(0, digits)
	var ts []plot.Tick
	for i := math.Ceil(vmin / step * 2); i*step/2 <= vmax*(1+1e-12); i++ {
		t := plot.Tick{Value: i * step / 2}
		if math.Mod(i, 2) == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', prec, 64)
		}
		ts = append(ts, t)
	}
	return ts
}
