package plot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/results"
)

// apartRecords returns rows that differ in what tells series apart: for
// each bucket count and group, sizes 1, 4 and 1024 KiB, runs times. Every
// row's time and bandwidth are distinct from every other row's, so that a
// value drawn names the row it came from; a bucket count's times are far
// from the other's, so that a median across them is no row's.
func apartRecords(buckets []int, groups []string, runs int, base float64) []results.Record {
	var recs []results.Record
	for run := 1; run <= runs; run++ {
		for bi, b := range buckets {
			for gi, g := range groups {
				for si, size := range []int64{1 << 10, 4 << 10, 1 << 20} {
					t := base * float64(1+bi*15) * float64(1+gi) * float64(int64(1)<<(2*si)) * (1 + 0.01*float64(run*run))
					recs = append(recs, results.Record{
						Op: "allreduce", DType: "fp32", RedOp: "sum", Root: -1, Algo: "ring",
						Bytes: size, Count: size / 4, Iters: 5, TimeUS: t, AlgBW: float64(size) / t / 1e3,
						BusBW: 1.75 * float64(size) / t / 1e3, Util: math.NaN(), Wrong: -1, Run: run,
						Group: g, Buckets: b,
					})
				}
			}
		}
	}
	return recs
}

// svgText returns the text of an SVG's elements, one string per run of
// character data, and the style of every path drawn as a series' line or
// legend thumbnail (1.5 points wide).
func svgText(t *testing.T, path string) (texts []string, lineStyles map[string]int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lineStyles = map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return texts, lineStyles
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			for _, a := range tok.Attr {
				if tok.Name.Local == "path" && a.Name.Local == "style" &&
					(strings.Contains(a.Value, "stroke-width:1.5;") || strings.HasSuffix(a.Value, "stroke-width:1.5")) {
					lineStyles[a.Value]++
				}
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				texts = append(texts, s)
			}
		}
	}
}

// TestSeriesApart checks that rows measured apart are drawn apart, read
// back from the SVG: each bucket count of --fusion, each --group domain and
// each file its own series with its own look and a label naming what
// differs; Go benchmark files their link line; and every point drawn a
// value measured for that very row.
func TestSeriesApart(t *testing.T) {
	h := testHeader(12.5)
	for _, c := range []struct {
		name   string
		files  func(t *testing.T) []string
		labels []string // of the series, in order
		title  string
		link   bool
	}{{
		name: "fusion 1,16",
		files: func(t *testing.T) []string {
			return []string{writeFile(t, "f.csv", csvSink, h, apartRecords([]int{1, 16}, []string{""}, 3, 10))}
		},
		labels: []string{"allreduce 1 bucket", "allreduce 16 buckets"}, title: "fp32, shm, 8 ranks, algo auto", link: true,
	}, {
		name: "fusion 1,16 in Go benchmark format",
		files: func(t *testing.T) []string {
			return []string{writeFile(t, "f.txt", benchSink, h, apartRecords([]int{1, 16}, []string{""}, 3, 10))}
		},
		labels: []string{"allreduce 1 bucket", "allreduce 16 buckets"}, title: "fp32, shm, 8 ranks, algo auto", link: true,
	}, {
		name: "groups",
		files: func(t *testing.T) []string {
			return []string{writeFile(t, "g.csv", csvSink, h, apartRecords([]int{1}, []string{"tp", "dp"}, 1, 10))}
		},
		labels: []string{"allreduce group tp", "allreduce group dp"}, title: "fp32, shm, 8 ranks, algo auto", link: true,
	}, {
		name: "two files",
		files: func(t *testing.T) []string {
			return []string{
				writeFile(t, "old.csv", csvSink, h, apartRecords([]int{1}, []string{""}, 2, 10)),
				writeFile(t, "new.txt", benchSink, h, apartRecords([]int{1}, []string{""}, 2, 13)),
			}
		},
		labels: []string{"allreduce old.csv", "allreduce new.txt"}, title: "fp32, shm, 8 ranks, algo auto", link: true,
	}, {
		name: "Go benchmark file without a link",
		files: func(t *testing.T) []string {
			return []string{writeFile(t, "n.txt", benchSink, testHeader(0), apartRecords([]int{1}, []string{""}, 1, 10))}
		},
		labels: []string{"allreduce"}, title: "fp32, shm, 8 ranks, algo auto", link: false,
	}} {
		t.Run(c.name, func(t *testing.T) {
			files := c.files(t)
			d, err := Load(files...)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "p.svg")
			if err := Write(d, out); err != nil {
				t.Fatal(err)
			}
			texts, styles := svgText(t, out)
			var labels []string
			for _, s := range d.Series {
				labels = append(labels, s.Label)
			}
			if !slices.Equal(labels, c.labels) {
				t.Errorf("series labels %q, want %q", labels, c.labels)
			}
			for _, l := range c.labels {
				if n := count(texts, l); n != 1 {
					t.Errorf("the SVG says %q %d times, want once (the legend): %q", l, n, texts)
				}
			}
			if !slices.Contains(texts, "hccl-test: "+c.title) {
				t.Errorf("the SVG has no title %q: %q", c.title, texts)
			}
			// Each series draws its line in both panels and the legend:
			// one look per series, three paths of it.
			if len(styles) != len(c.labels) {
				t.Errorf("%d line styles in the SVG, want one per series (%d): %v", len(styles), len(c.labels), styles)
			}
			for st, n := range styles {
				if n != 3 {
					t.Errorf("line style %q drawn %d times, want 3 (two panels and the legend)", st, n)
				}
			}
			if got := slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, "link 12.5 GB/s") }); got != c.link {
				t.Errorf("link line drawn: %v, want %v", got, c.link)
			}
			checkMeasured(t, d, files)
		})
	}
}

func count(ss []string, s string) int {
	n := 0
	for _, v := range ss {
		if v == s {
			n++
		}
	}
	return n
}

// checkMeasured checks that every point of d is a row read from files, of
// that series' key and size, time and bandwidth from the same row: never
// a value computed across rows.
func checkMeasured(t *testing.T, d *Data, files []string) {
	t.Helper()
	var l loader
	for i, f := range files {
		if err := l.loadFile(f); err != nil {
			t.Fatal(err)
		}
		l.endFile(i)
	}
	labels := fileLabels(files)
	type pair struct{ time, bw float64 }
	measured := map[string][]pair{}
	for id, rs := range l.rows {
		key := l.keys[id.key]
		key.File = labels[l.files[id.key]]
		k := fmt.Sprintf("%+v %d", key, id.bytes)
		for _, r := range rs.kept {
			measured[k] = append(measured[k], pair{r.timeUS, r.busBW})
		}
	}
	points := 0
	for _, s := range d.Series {
		for _, p := range s.Points {
			points++
			rows := measured[fmt.Sprintf("%+v %d", s.Key, p.Bytes)]
			if !slices.Contains(rows, pair{p.TimeUS, p.BusBW}) {
				t.Errorf("%s at %d bytes: %v µs, %v GB/s is no row measured: %v", s.Label, p.Bytes, p.TimeUS, p.BusBW, rows)
			}
			if len(rows) != p.Rows {
				t.Errorf("%s at %d bytes: %d rows, want %d", s.Label, p.Bytes, p.Rows, len(rows))
			}
		}
	}
	if points == 0 {
		t.Error("no points")
	}
}

// TestSeriesLooks checks that MaxSeries series all look different (color,
// point shape and dash pattern), that no two of one color share a shape,
// and that Load refuses more.
func TestSeriesLooks(t *testing.T) {
	type look struct {
		color, shape, dash string
	}
	seen := map[look]int{}
	colorShape := map[[2]string]int{}
	for i := range MaxSeries {
		line, points := seriesStyle(i)
		l := look{fmt.Sprint(line.Color), fmt.Sprintf("%T", points.Shape), fmt.Sprint(line.Dashes)}
		if j, ok := seen[l]; ok {
			t.Errorf("series %d looks like series %d: %v", i, j, l)
		}
		seen[l] = i
		if j, ok := colorShape[[2]string{l.color, l.shape}]; ok {
			t.Errorf("series %d has the color and shape of series %d", i, j)
		}
		colorShape[[2]string{l.color, l.shape}] = i
	}

	var b strings.Builder
	b.WriteString("schema_version,op,dtype,ranks,size_bytes,time_us,busbw_GBps\n")
	for ranks := 1; ranks <= MaxSeries+1; ranks++ {
		fmt.Fprintf(&b, "1,allreduce,fp32,%d,1024,%d,1\n", ranks, ranks)
	}
	path := filepath.Join(t.TempDir(), "many.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !regexp.MustCompile(`65 series .*at most 64`).MatchString(err.Error()) {
		t.Errorf("Load of %d series: error %v, want a refusal naming 65 series and at most 64", MaxSeries+1, err)
	}
}
