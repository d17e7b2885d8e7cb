package plot

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/results"
)

// writeRows writes a CSV of rows rows to path: sizes distinct sizes of
// one series, measured rows/sizes times each (-N), after a byte-order
// mark when bom is set.
func writeRows(tb testing.TB, path string, rows, sizes int, bom bool) string {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if bom {
		w.WriteString("\ufeff")
	}
	// Columns in an order of their own, one this reader does not know.
	w.WriteString("time_us,busbw_GBps,op,dtype,note,size_bytes,schema_version,ranks,backend,run_id\n")
	for i := range rows {
		fmt.Fprintf(w, "%g,%g,allreduce,fp32,%s,%d,1,8,shm,20261129T173000.000Z-node01\n",
			10+float64(i%sizes)*0.01, 1+float64(i%7), strings.Repeat("x", 400), 4*(i%sizes+1))
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkLoadRows loads and draws CSV files of distinct rows, from
// 7,500 to 120,000: the time per row stays level when plot is linear in
// rows.
func BenchmarkLoadRows(b *testing.B) {
	for _, n := range []int{7500, 30000, 120000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			path := writeRows(b, filepath.Join(dir, "rows.csv"), n, n, false)
			out := filepath.Join(dir, "rows.svg")
			b.ResetTimer()
			for b.Loop() {
				d, err := Load(path)
				if err != nil {
					b.Fatal(err)
				}
				if err := Write(d, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
		})
	}
}

// TestLoadLinear times Load on n and 8n distinct rows, the best of five
// tries taken in turn, and wants the larger to take less than 32 times as
// long (8 for linear work): a ratio of times measured in the same test,
// so a busy machine slows both sides.
func TestLoadLinear(t *testing.T) {
	dir := t.TempDir()
	const n = 2000
	small := writeRows(t, filepath.Join(dir, "small.csv"), n, n, false)
	large := writeRows(t, filepath.Join(dir, "large.csv"), 8*n, 8*n, false)
	load := func(path string) time.Duration {
		start := time.Now()
		if _, err := Load(path); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	ds, dl := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range 5 {
		ds, dl = min(ds, load(small)), min(dl, load(large))
	}
	t.Logf("%d rows: %v, %d rows: %v", n, ds, 8*n, dl)
	if ratio := float64(dl) / float64(ds); ratio > 32 {
		t.Errorf("Load of %d rows took %v, of %d rows %v: %.1f times as long, want under 32 (linear: 8)", n, ds, 8*n, dl, ratio)
	}
}

// TestLoadPastOldLimit loads a CSV past the 64 MiB that was the most
// read of a file, as a -N 0 run writes in half a minute, with its columns
// in an order of their own after a byte-order mark: every row is read.
func TestLoadPastOldLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 70 MB")
	}
	const sizes = 20
	rows := (results.MaxInputBytes+4<<20)/450/sizes*sizes + sizes
	path := writeRows(t, filepath.Join(t.TempDir(), "cycles.csv"), rows, sizes, true)
	if st, err := os.Stat(path); err != nil || st.Size() <= results.MaxInputBytes {
		t.Fatalf("file of %v bytes (%v), want more than %d", st.Size(), err, results.MaxInputBytes)
	}
	d, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Series) != 1 || len(d.Series[0].Points) != sizes {
		t.Fatalf("%d series, want 1 of %d points: %+v", len(d.Series), sizes, d.Series)
	}
	for _, p := range d.Series[0].Points {
		if p.Rows != rows/sizes {
			t.Errorf("%d bytes: %d rows, want %d", p.Bytes, p.Rows, rows/sizes)
		}
	}
}

// TestLoadLongFirstLine loads a file of one line of 50 MB that starts as a
// CSV header: the error says so, not that a Go benchmark line is too long.
func TestLoadLongFirstLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one-line.csv")
	if err := os.WriteFile(path, []byte("schema_version,op,size_bytes,time_us,busbw_GBps,"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 50e6); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	want := path + ":1: a line longer than 1 MiB that starts as the header of an hccl-test CSV"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}
