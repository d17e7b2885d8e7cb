package plot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testData loads the runs of testRecords from a CSV with a link of 12.5 GB/s.
func testData(t *testing.T) *Data {
	t.Helper()
	d, err := Load(writeFile(t, "a.csv", csvSink, testHeader(12.5), testRecords(1, 2, 3)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestWritePNG(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plot.png")
	if err := Write(testData(t), out); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 900 {
		t.Errorf("image is %dx%d, want 800x900 (8x9 inches at 100 dpi)", b.Dx(), b.Dy())
	}
	colors := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			colors[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}]++
		}
	}
	if len(colors) < 20 {
		t.Errorf("%d distinct colors, want many (two series, grid, text)", len(colors))
	}
	white := colors[color.RGBA{0xff, 0xff, 0xff, 0xff}]
	if white < b.Dx()*b.Dy()/2 || white == b.Dx()*b.Dy() {
		t.Errorf("%d white pixels of %d: want a white background with something drawn", white, b.Dx()*b.Dy())
	}
	// Each series is drawn in its own color: count the pixels near it
	// (anti-aliasing blends most of a thin line with the background).
	for i := range testOps {
		want, n := palette[i], 0
		for c, count := range colors {
			if absDiff(c.R, want.R)+absDiff(c.G, want.G)+absDiff(c.B, want.B) < 60 {
				n += count
			}
		}
		if n < 200 {
			t.Errorf("series %d: %d pixels near its color %v, want more", i, n, want)
		}
	}
}

func TestWriteSVG(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plot.SVG") // the extension is case-insensitive
	if err := Write(testData(t), out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	elems := map[string]int{}
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			elems[tok.Name.Local]++
		case xml.CharData:
			text.Write(tok)
		}
	}
	if elems["svg"] != 1 || elems["path"] < 20 {
		t.Errorf("elements %v: want one svg and many paths (lines, points, grid, ticks)", elems)
	}
	for _, s := range []string{"allreduce", "allgather", "link 12.5 GB/s", "1K", "4K", "1M", "bus bandwidth (GB/s)", "time per op (µs)"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("SVG text does not say %q", s)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	d := testData(t)
	nan := math.NaN()
	for _, c := range []struct {
		name   string
		d      *Data
		out    string
		is     error
		saying []string
	}{
		{"unknown extension", d, "plot.pdf", nil, []string{`".pdf"`, "want .png or .svg"}},
		{"no extension", d, "plot", nil, []string{"want .png or .svg"}},
		{"nil data", nil, "a.png", ErrNoData, nil},
		{"no series", &Data{}, "b.png", ErrNoData, nil},
		{"no point with a value", &Data{Series: []Series{{Label: "x", Points: []Point{{Bytes: 1024, TimeUS: nan, BusBW: nan}}}}},
			"c.png", nil, []string{"no point"}},
		{"directory missing", d, "missing/plot.png", os.ErrNotExist, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.out)
			err := Write(c.d, out)
			if err == nil {
				t.Fatal("no error")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q is not %v", err, c.is)
			}
			for _, s := range c.saying {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", c.out)
			}
		})
	}
}

// TestWriteOdd draws data that stretches the layout: one point, many
// series with long labels, sizes from 1 byte to 1 TiB, unknown values and a
// link far above the data.
func TestWriteOdd(t *testing.T) {
	many := &Data{LinkGBps: 450}
	for i := range 20 {
		k := Key{Op: "reducescatter", DType: "bf16", RedOp: "max", Backend: "tcp", Ranks: i + 1, Algo: "ring", InPlace: i%2 == 0}
		var ps []Point
		for e := 0; e <= 40; e += 4 {
			v := float64(int64(1)<<e) * float64(i+1)
			ps = append(ps, Point{Bytes: int64(1) << e, TimeUS: v / 1e3, BusBW: math.Log2(v + 1), Rows: 1})
		}
		ps[1].BusBW, ps[2].TimeUS = math.NaN(), math.NaN()
		many.Series = append(many.Series, Series{Key: k, Points: ps})
	}
	many.label()
	for _, c := range []struct {
		name string
		d    *Data
	}{
		{"one point", &Data{Series: []Series{{Label: "allreduce", Points: []Point{{Bytes: 1000, TimeUS: 5, BusBW: 0}}}}}},
		{"only times", &Data{Series: []Series{{Label: "allreduce", Points: []Point{{Bytes: 8, TimeUS: 5, BusBW: math.NaN()}, {Bytes: 64, TimeUS: 7, BusBW: math.NaN()}}}}}},
		{"many series", many},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "odd.png")
			if err := Write(c.d, out); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(out); err != nil || fi.Size() < 1000 {
				t.Errorf("stat %s: %v, %v", out, fi, err)
			}
		})
	}
}

func absDiff(a, b uint8) int { return max(int(a)-int(b), int(b)-int(a)) }
