package results

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
)

// readBench reads a Go benchmark file back, failing on syntax errors.
func readBench(t *testing.T, data []byte) ([]*benchfmt.Result, benchfmt.UnitMetadataMap) {
	t.Helper()
	r := benchfmt.NewReader(bytes.NewReader(data), "test.txt")
	var out []*benchfmt.Result
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		case *benchfmt.Result:
			out = append(out, rec.Clone()) // the reader reuses rec
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out, r.Units()
}

func TestBenchFmtReadBack(t *testing.T) {
	var buf bytes.Buffer
	writeAll(t, NewBenchFmt(&buf), fmtHeader(), caseRecords())
	if !strings.HasPrefix(buf.String(), "Unit algbw-GB/s better=higher\nUnit busbw-GB/s better=higher\n") {
		t.Errorf("file does not start with the unit metadata:\n%s", buf.String())
	}
	got, units := readBench(t, buf.Bytes())
	cases := fmtCases()
	if len(got) != len(cases) {
		t.Fatalf("%d results, want %d:\n%s", len(got), len(cases), buf.String())
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := got[i]
			if res.Name.String() != c.bench {
				t.Errorf("name %q, want %q", res.Name, c.bench)
			}
			if res.Iters != c.rec.Iters {
				t.Errorf("iters %d, want %d", res.Iters, c.rec.Iters)
			}
			// The Reader tidies ns/op to sec/op; NaN bandwidths are left out;
			// a time of 0 is written as 1 ns.
			want := map[string]float64{"sec/op": max(c.rec.TimeUS*1e-6, 1e-9)}
			if !math.IsNaN(c.rec.AlgBW) {
				want["algbw-GB/s"], want["busbw-GB/s"] = c.rec.AlgBW, c.rec.BusBW
			}
			if c.rec.ComputeUS > 0 {
				want["overlapped-sec/op"] = c.rec.TotalUS * 1e-6
			}
			values := map[string]float64{}
			for _, v := range res.Values {
				values[v.Unit] = v.Value
			}
			if len(values) != len(want) {
				t.Errorf("values %v, want %v", values, want)
			}
			for unit, w := range want {
				if g, ok := values[unit]; !ok || math.Abs(g-w) > 5e-4*w { // rounded to 4 or 5 digits
					t.Errorf("%s = %v, want %v", unit, g, w)
				}
			}
			var keys []string
			for _, cfg := range res.Config {
				if cfg.File {
					keys = append(keys, cfg.Key+": "+string(cfg.Value))
				}
			}
			wantKeys := []string{"goos: " + runtime.GOOS, "goarch: " + runtime.GOARCH, "backend: shm",
				"ranks: 8", "placement: both", "algo: auto", "host: node01"}
			if !slices.Equal(keys, wantKeys) {
				t.Errorf("file config %q, want %q", keys, wantKeys)
			}
		})
	}
	for unit, want := range map[string]int{"algbw-GB/s": 1, "busbw-GB/s": 1, "sec/op": -1} {
		if got := units.GetBetter(unit); got != want {
			t.Errorf("better for %s = %d, want %d", unit, got, want)
		}
	}
	// Facts that change from run to run are comments, not configuration.
	for _, want := range []string{"\n# hccl-test 0.1.0  run 20261129T173012.345Z-node01\n", "\n# link bandwidth 1.61 GB/s (auto: "} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("file lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestFormatBinarySize(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		want  string
	}{
		{0, "0B"}, {1, "1B"}, {1000, "1000B"}, {1023, "1023B"}, {1024, "1KiB"},
		{1280, "1.25KiB"}, {1536, "1.5KiB"}, {1056, "1056B"}, {1 << 20, "1MiB"},
		{1<<20 + 1<<10, "1025KiB"}, {3 << 19, "1.5MiB"}, {3 << 30, "3GiB"},
		{5 << 40, "5TiB"}, {1 << 50, "1024TiB"}, {268435456, "256MiB"},
	} {
		if got := FormatBinarySize(c.bytes); got != c.want {
			t.Errorf("FormatBinarySize(%d) = %q, want %q", c.bytes, got, c.want)
		}
	}
}

// TestBenchNamesIdentifyRows checks, over sweeps like real ones, that every
// row gets its own name, in the syntax benchstat parses, and that the size
// in it reads back exactly.
func TestBenchNamesIdentifyRows(t *testing.T) {
	sizeSyntax := regexp.MustCompile(`^[0-9.]+([kKMGTPEZY]i?)?[bB]?$`) // benchstat's @num order
	mult := map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
	var sizes []int64
	for _, f := range []float64{2, 1.5, 1.1} {
		for s := 1.0; s < 1<<36; s *= f {
			sizes = append(sizes, int64(s), int64(s)/8*8)
		}
	}
	for s := int64(1 << 20); s < 1<<24; s += 100000 {
		sizes = append(sizes, s)
	}
	for _, s := range sizes {
		name := FormatBinarySize(s)
		num := strings.TrimRight(name, "BKMGTi")
		v, err := strconv.ParseFloat(num, 64)
		if !sizeSyntax.MatchString(name) || err != nil || v*mult[name[len(num):]] != float64(s) {
			t.Errorf("size %d named %q", s, name)
		}
	}

	b := NewBenchFmt(&bytes.Buffer{})
	if err := b.Begin(fmtHeader()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, op := range []string{"allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv", "gather", "scatter"} {
		for _, root := range []int{-1, 0, 3} {
			for _, inPlace := range []bool{false, true} {
				for _, size := range []int64{1000, 1024, 1 << 20} {
					r := Record{Op: op, DType: "bf16", RedOp: "sum", Root: root, InPlace: inPlace, Bytes: size}
					name := b.name(r)
					if seen[name] || strings.ContainsAny(name, " \t") || regexp.MustCompile(`-[0-9]+$`).MatchString(name) {
						t.Errorf("name %q repeated, or with a space or a -N suffix", name)
					}
					seen[name] = true
				}
			}
		}
	}
}

// TestBenchstatCompares runs benchstat, when it is installed, on two runs of
// 10 repetitions whose second is 30% slower and was made by another version
// with another measured link bandwidth: the rows must still pair up.
func TestBenchstatCompares(t *testing.T) {
	benchstat, err := exec.LookPath("benchstat")
	if err != nil {
		t.Skip("benchstat not on PATH (go install golang.org/x/perf/cmd/benchstat@latest to run this test)")
	}
	dir := t.TempDir()
	write := func(file, version string, link, slower float64) {
		h := fmtHeader()
		h.Version, h.LinkGBps = version, link
		recs := caseRecords()[:2]
		var all []Record
		for i := range 10 {
			for _, r := range recs {
				jitter := 1 + 0.002*float64(i%5)
				r.TimeUS *= slower * jitter
				r.AlgBW /= slower * jitter
				r.BusBW /= slower * jitter
				all = append(all, r)
			}
		}
		var buf bytes.Buffer
		writeAll(t, NewBenchFmt(&buf), h, all)
		if err := os.WriteFile(filepath.Join(dir, file), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("old.txt", "0.1.0", 1.61, 1)
	write("new.txt", "0.2.0", 1.58, 1.3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, benchstat, "old.txt", "new.txt")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	for _, name := range []string{fmtCases()[0].bench, fmtCases()[1].bench} {
		row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s.*\+(29\.9\d|30\.0\d)% \(p=`)
		if !row.Match(out) {
			t.Errorf("benchstat output has no +30%% row for %s:\n%s", name, out)
		}
	}
}
