package plot

import (
	"fmt"
	"image/color"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Heatmap is a square matrix of pairs (host by host) for WriteHeatmap.
// Every slice is len(Labels) by len(Labels); cell [i][j] is the pair of
// Labels[i] and Labels[j].
type Heatmap struct {
	Title  string
	Labels []string
	// Value is the figure written in a cell (GB/s), NaN for none.
	Value [][]float64
	// Ratio colours a cell: vermillion at 0, yellow at Floor, bluish
	// green at 1 and above; NaN leaves it white.
	Ratio [][]float64
	// Mark is written in a cell instead of its value, on dark grey:
	// "FAIL", "FLAKY"; "" for none.
	Mark  [][]string
	Floor float64 // the ratio below which a pair is slow, for the colours
	Note  string  // under the plot: what a cell is
}

// WriteHeatmap draws h into one image at path out, .png or .svg by its
// extension (CheckOutput says beforehand whether out will do); it
// replaces out if it exists.
func WriteHeatmap(h *Heatmap, out string) error {
	ext, err := imageFormat(out)
	if err != nil {
		return err
	}
	if h == nil || len(h.Labels) == 0 {
		return fmt.Errorf("%s: %w", out, ErrNoData)
	}
	const side = 8 * vg.Inch
	c := newCanvas(ext, side, side)
	heatmapPlot(h).Draw(draw.New(c))
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		os.Remove(out) // not half an image
		return fmt.Errorf("%s: %w", out, err)
	}
	return f.Close()
}

// heatmapPlot lays h out: Labels[0] at the top left, one unit per cell.
func heatmapPlot(h *Heatmap) *plot.Plot {
	n := len(h.Labels)
	p := plot.New()
	p.Title.Text = h.Title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = h.Note
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, float64(n), 0, float64(n)
	var xt, yt []plot.Tick
	for i, l := range h.Labels {
		xt = append(xt, plot.Tick{Value: float64(i) + 0.5, Label: l})
		yt = append(yt, plot.Tick{Value: float64(n-1-i) + 0.5, Label: l})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	if n > 6 {
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	for _, sty := range []*plot.Axis{&p.X, &p.Y} {
		sty.Tick.Label.Font.Variant = sans
		sty.Label.TextStyle.Font.Variant = sans
	}
	p.Title.TextStyle.Font.Variant = sans
	p.Add(cells{h})
	return p
}

// cells draws the cells of a heatmap.
type cells struct{ h *Heatmap }

// Plot implements plot.Plotter.
func (cs cells) Plot(c draw.Canvas, p *plot.Plot) {
	h, n := cs.h, len(cs.h.Labels)
	trX, trY := p.Transforms(&c)
	sty := p.X.Tick.Label
	sty.Rotation, sty.XAlign, sty.YAlign = 0, draw.XCenter, draw.YCenter
	sty.Font.Size = vg.Points(max(5, min(11, 120/float64(n))))
	grey := color.RGBA{0x40, 0x40, 0x40, 0xff}
	for i := range n {
		for j := range n {
			x0, x1 := trX(float64(j)), trX(float64(j+1))
			y0, y1 := trY(float64(n-1-i)), trY(float64(n-i))
			rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			centre := vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}
			label, textColor := "", color.Color(color.Black)
			switch {
			case i == j:
				c.FillPolygon(color.RGBA{0xee, 0xee, 0xee, 0xff}, rect)
			case cs.at(h.Mark, i, j) != "":
				c.FillPolygon(grey, rect)
				label, textColor = cs.at(h.Mark, i, j), color.White
			default:
				c.FillPolygon(ratioColor(cs.num(h.Ratio, i, j), h.Floor), rect)
				if v := cs.num(h.Value, i, j); !math.IsNaN(v) {
					label = fmt.Sprintf("%.3g", v)
				}
			}
			c.StrokeLines(draw.LineStyle{Color: color.White, Width: vg.Points(1)}, append(rect, rect[0]))
			if label != "" {
				sty.Color = textColor
				c.FillText(sty, centre, label)
			}
		}
	}
}

func (cs cells) at(m [][]string, i, j int) string {
	if i < len(m) && j < len(m[i]) {
		return m[i][j]
	}
	return ""
}

func (cs cells) num(m [][]float64, i, j int) float64 {
	if i < len(m) && j < len(m[i]) {
		return m[i][j]
	}
	return math.NaN()
}

// ratioColor is vermillion at 0, yellow at floor, bluish green at 1 and
// above (Okabe and Ito's colours, told apart with colour vision
// deficiencies), white for NaN.
func ratioColor(r, floor float64) color.Color {
	if math.IsNaN(r) {
		return color.White
	}
	if !(floor > 0 && floor < 1) {
		floor = 0.8
	}
	low, mid, high := palette[1], palette[7], palette[2]
	if r <= floor {
		return mix(low, mid, max(r, 0)/floor)
	}
	return mix(mid, high, min((r-floor)/(1-floor), 1))
}

// mix is a + t (b - a) per channel, t in [0, 1].
func mix(a, b color.RGBA, t float64) color.RGBA {
	ch := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + t*(float64(y)-float64(x)))) }
	return color.RGBA{ch(a.R, b.R), ch(a.G, b.G), ch(a.B, b.B), 0xff}
}
