package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Size of the image: two panels stacked, each about as wide as tall.
const (
	width  = 8 * vg.Inch
	height = 9 * vg.Inch
	dpi    = 100 // of PNG images: 800 x 900 pixels
)

// sans is the font variant of all text: Liberation Sans rather than
// gonum/plot's default serif.
const sans = "Sans"

// xSizeLabel names the x axis of both panels.
const xSizeLabel = "message size (bytes; K = 1024)"

// palette is Okabe and Ito's, which readers with any common color vision
// deficiency tell apart, with yellow last because it is faint on white.
// Series past the eighth repeat a color with another point shape and
// dash pattern (see seriesStyle).
var palette = []color.RGBA{
	{0x00, 0x72, 0xb2, 0xff}, // blue
	{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0x00, 0x00, 0x00, 0xff}, // black
	{0xf0, 0xe4, 0x42, 0xff}, // yellow
}

// Write draws d into one image at path out: bus bandwidth (GB/s, linear)
// above time (µs, log), both against message size on a log axis with
// binary ticks, one line with points per series, the legend to the right
// and a dashed line at d.LinkGBps when it is known. The extension of out
// chooses the format: .png or .svg. Write replaces out if it exists.
func Write(d *Data, out string) error {
	ext, err := imageFormat(out)
	if err != nil {
		return err
	}
	if d == nil || len(d.Series) == 0 {
		return fmt.Errorf("%s: %w", out, ErrNoData)
	}
	c := newCanvas(ext, width, height)
	if err := render(d, draw.New(c)); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		os.Remove(out) // not half an image
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return nil
}

// render draws the two panels and the legend on dc.
func render(d *Data, dc draw.Canvas) error {
	bw, tm := newPanels(d.Title)
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.ThumbnailWidth = vg.Points(24)
	legend.TextStyle.Font.Variant = sans
	legend.TextStyle.Font.Size = vg.Points(11)
	legend.Padding = vg.Points(3)
	legend.XOffs = vg.Points(8)

	var r ranges
	for i, s := range d.Series {
		var bwXY, tmXY plotter.XYs
		for _, pt := range s.Points {
			x := float64(pt.Bytes)
			if !math.IsNaN(pt.BusBW) && !math.IsInf(pt.BusBW, 0) {
				bwXY = append(bwXY, plotter.XY{X: x, Y: pt.BusBW})
				r.x, r.bw = r.x.add(x), r.bw.add(pt.BusBW)
			}
			if pt.TimeUS > 0 && !math.IsInf(pt.TimeUS, 0) { // > 0: a log axis
				tmXY = append(tmXY, plotter.XY{X: x, Y: pt.TimeUS})
				r.x, r.tm = r.x.add(x), r.tm.add(pt.TimeUS)
			}
		}
		line, points := seriesStyle(i)
		legend.Add(s.Label, line, points)
		for _, pxy := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{bw, bwXY}, {tm, tmXY}} {
			if len(pxy.xys) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(pxy.xys)
			if err != nil {
				return fmt.Errorf("series %q: %w", s.Label, err)
			}
			l.LineStyle, sc.GlyphStyle = line.LineStyle, points.GlyphStyle
			pxy.p.Add(l, sc)
		}
	}
	if r.x.n == 0 {
		return errors.New("no point has a size and a time or bandwidth")
	}

	// Half a power of two either side, so that the end points are not on
	// the frame; bandwidth from 0, with room above the link line.
	xmin, xmax := r.x.min/math.Sqrt2, r.x.max*math.Sqrt2
	bw.X.Min, bw.X.Max, tm.X.Min, tm.X.Max = xmin, xmax, xmin, xmax
	bw.Y.Min, bw.Y.Max = 0, min(max(r.bw.max, d.LinkGBps, 1e-9)*1.1, math.MaxFloat64)
	tm.Y.Min, tm.Y.Max = 1, 10
	if r.tm.n > 0 {
		tm.Y.Min, tm.Y.Max = r.tm.min/1.3, min(r.tm.max*1.3, math.MaxFloat64)
	}
	if d.LinkGBps > 0 {
		if err := addLink(bw, d.LinkGBps, xmin, xmax); err != nil {
			return err
		}
	}
	layout(dc, bw, tm, &legend, d.Note)
	return nil
}

// newPanels returns the bandwidth and time panels, styled and with their
// axes set up but no data.
func newPanels(title string) (bw, tm *plot.Plot) {
	bw, tm = plot.New(), plot.New()
	bw.Title.Text = "hccl-test"
	if title != "" {
		bw.Title.Text += ": " + title
	}
	bw.Title.TextStyle.Font.Size = vg.Points(13)
	bw.Title.Padding = vg.Points(8)
	bw.Y.Label.Text = "bus bandwidth (GB/s)"
	bw.Y.Tick.Marker = linearTicks{}
	tm.Y.Label.Text = "time per op (µs)"
	tm.Y.Scale, tm.Y.Tick.Marker = plot.LogScale{}, timeTicks{}
	for _, p := range []*plot.Plot{bw, tm} {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, sizeTicks{}
		p.Add(plotter.NewGrid())
		for _, sty := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
			&p.X.Tick.Label, &p.Y.Tick.Label} {
			sty.Font.Variant = sans
		}
	}
	return bw, tm
}

// layout draws the panels one above the other with their data areas
// aligned, the x axis label below them, and the legend in a column to the
// right of both, so that it never hides a line however many series there
// are, and note, if any, in small type at the bottom.
func layout(dc draw.Canvas, bw, tm *plot.Plot, legend *plot.Legend, note string) {
	// The x axis label is drawn here rather than as tm.X.Label: gonum/plot
	// centres that label's glyph box at the arithmetic mean of the axis
	// range, which on a log axis lies near its right end, and pads the
	// panel as if the label stuck out there.
	xLabel := text.Style{Color: color.Black, Font: font.Font{Typeface: "Liberation", Variant: sans, Size: vg.Points(12)},
		XAlign: draw.XCenter, Handler: tm.TextHandler}
	noteStyle := xLabel
	noteStyle.XAlign, noteStyle.Font.Size, noteStyle.Color = draw.XLeft, vg.Points(9), color.Gray{0x40}
	noteH := vg.Length(0)
	if note != "" {
		noteH = noteStyle.Height(note) + vg.Points(4)
	}
	// A fifth more than the legend's width in Liberation Sans, whose
	// metrics gonum/plot measures with: an SVG viewer without that font
	// draws the text in a wider one.
	legW := legend.Rectangle(dc).Size().X*1.2 + legend.XOffs + vg.Points(6)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(10) + xLabel.Height(xSizeLabel) + noteH,
		PadLeft: vg.Points(6), PadRight: vg.Points(6), PadY: vg.Points(18)}
	cs := plot.Align([][]*plot.Plot{{bw}, {tm}}, tiles, draw.Crop(dc, 0, -legW, 0, 0))
	bw.Draw(cs[0][0])
	tm.Draw(cs[1][0])
	data := tm.DataCanvas(cs[1][0])
	dc.FillText(xLabel, vg.Point{X: (data.Min.X + data.Max.X) / 2, Y: dc.Min.Y + vg.Points(6) + noteH}, xSizeLabel)
	if note != "" {
		dc.FillText(noteStyle, vg.Point{X: dc.Min.X + vg.Points(6), Y: dc.Min.Y + vg.Points(4)}, note)
	}
	// The legend starts level with the top of the bandwidth panel's data.
	titleH := bw.Title.TextStyle.Height(bw.Title.Text) + bw.Title.Padding
	legend.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-legW, 0, 0, -(tiles.PadTop + titleH + vg.Points(4))))
}

// shapes are the point shapes, open and filled, as many as palette's
// colors.
var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{},
}

// dashes are the line patterns, solid first, as many as palette's colors.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(12), vg.Points(4)},
	{vg.Points(1), vg.Points(3)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(4), vg.Points(2), vg.Points(1), vg.Points(2)},
}

// seriesStyle returns how series i is drawn, as a line and points whose
// styles the plotted ones copy and that the legend shows. The first eight
// series differ in color and shape and are solid; each further eight take
// the colors again, with the shapes shifted by one and another dash
// pattern, so that no two of the first MaxSeries (8 x 8) share color,
// shape and pattern, nor any two of the same color their shape.
func seriesStyle(i int) (*plotter.Line, *plotter.Scatter) {
	n := len(palette)
	c := palette[i%n]
	line := &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: dashes[i/n%n]}}
	points := &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: shapes[(i%n+i/n)%n]}}
	return line, points
}

// addLink draws a dashed grey line across the bandwidth plot at the link
// bandwidth, labelled at its left end.
func addLink(p *plot.Plot, gbps, xmin, xmax float64) error {
	l, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: gbps}, {X: xmax, Y: gbps}})
	if err != nil {
		return err
	}
	l.Color = color.Gray{0x60}
	l.Width = vg.Points(1.2)
	l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
	prec := 3 // significant digits, but no exponent
	if gbps >= 1000 {
		prec = int(math.Log10(gbps)) + 1
	}
	text := "link " + strconv.FormatFloat(gbps, 'g', prec, 64) + " GB/s"
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: xmin, Y: gbps}}, Labels: []string{text}})
	if err != nil {
		return err
	}
	lb.TextStyle[0].Color = l.Color
	lb.TextStyle[0].Font.Variant = sans
	lb.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(3)}
	p.Add(l, lb)
	return nil
}

// extent is the range of some values.
type extent struct {
	min, max float64
	n        int
}

func (e extent) add(v float64) extent {
	if e.n == 0 || v < e.min {
		e.min = v
	}
	if e.n == 0 || v > e.max {
		e.max = v
	}
	e.n++
	return e
}

// ranges are the extents of what the two panels plot.
type ranges struct{ x, bw, tm extent }

// canvas is an image being drawn that writes itself as its format.
type canvas interface {
	vg.CanvasSizer
	io.WriterTo
}

// newCanvas returns a canvas of w by h for ext: PNG at dpi for ".png",
// else SVG (the callers have checked ext).
func newCanvas(ext string, w, h vg.Length) canvas {
	if ext == ".png" {
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}
	}
	return vgsvg.New(w, h)
}
