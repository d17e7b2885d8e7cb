package results

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeRows writes a CSV of n distinct rows (every row its own size, as
// a sweep with a fine --stepfactor makes) to path, and returns path.
func writeRows(tb testing.TB, path string, n int, shift float64) string {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	c := NewCSV(w)
	h := Header{Version: "0.1.0", Backend: "shm", Ranks: 8, Algo: "auto", Placement: "out", Check: true,
		Started: time.Date(2026, 11, 29, 17, 30, 0, 0, time.UTC), Host: "node01"}
	err = c.Begin(h)
	for i := range n {
		us := 10 + float64(i)*0.01 + shift
		bytes := int64(4 * (i + 1))
		algbw := float64(bytes) / (us * 1e3)
		if err == nil {
			err = c.Write(Record{Op: "allreduce", DType: "fp32", RedOp: "sum", Root: -1, Algo: "ring", Bytes: bytes,
				Count: bytes / 4, Iters: 20, TimeUS: us, AlgBW: algbw, BusBW: algbw, Util: math.NaN(), Run: 1})
		}
	}
	if err == nil {
		err = c.End(Summary{})
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// compareFiles does what `hccl-test compare` does with two files: reads
// them, compares them and writes the notes and the tables.
func compareFiles(tb testing.TB, oldPath, newPath string) {
	tb.Helper()
	old, err := ReadSamples(oldPath)
	if err != nil {
		tb.Fatal(err)
	}
	new, err := ReadSamples(newPath)
	if err != nil {
		tb.Fatal(err)
	}
	cs := Compare(old, new, CompareOptions{})
	if err := WriteNotes(io.Discard, old, new, "old", "new"); err != nil {
		tb.Fatal(err)
	}
	if err := WriteComparison(io.Discard, cs, "old", "new"); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkCompareRows compares two CSV files of distinct rows, from
// 7,500 to 120,000 rows: the time per row stays level when compare is
// linear in rows (it grew with the rows when Unpaired searched the other
// file for each row: 120,000 rows took 80 s).
func BenchmarkCompareRows(b *testing.B) {
	for _, n := range []int{7500, 30000, 120000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			old := writeRows(b, filepath.Join(dir, "old.csv"), n, 0)
			new := writeRows(b, filepath.Join(dir, "new.csv"), n, 1)
			b.ResetTimer()
			for b.Loop() {
				compareFiles(b, old, new)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
		})
	}
}

// rowSamples returns the samples of n distinct rows, each measured once in
// three units, as ReadSamples returns them for a file like writeRows'.
func rowSamples(n int, shift float64) *Samples {
	s := &Samples{Path: "rows", values: map[sampleKey][]float64{}}
	for i := range n {
		name := fmt.Sprintf("AllReduce/backend=shm/ranks=8/dtype=fp32/redop=sum/size=%dB", 4*(i+1))
		s.add(name, "sec/op", (10+float64(i)*0.01+shift)*1e-6)
		s.add(name, unitBusBW, 1+float64(i))
		s.add(name, unitAlgBW, 1+float64(i))
	}
	return s
}

// TestCompareLinear times what compare does with two files read (Compare,
// WriteNotes with its Unpaired, WriteComparison) on n and 8n distinct
// rows, each the best of five tries taken in turn, and wants the larger to
// take less than 32 times as long: 8 for linear work (14-20 measured, the
// caches and the collector working on more memory), 61-66 measured for
// the quadratic Unpaired that was. The bound is a ratio of times measured
// in the same test, so a busy machine slows both sides.
func TestCompareLinear(t *testing.T) {
	run := func(old, new *Samples) time.Duration {
		start := time.Now()
		cs := Compare(old, new, CompareOptions{})
		if err := WriteNotes(io.Discard, old, new, "old", "new"); err != nil {
			t.Fatal(err)
		}
		if err := WriteComparison(io.Discard, cs, "old", "new"); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	const n = 1000
	// Half the rows of new are its own: Unpaired has rows to list.
	oldS, newS := rowSamples(n, 0), rowSamples(n+n/2, 1)
	oldL, newL := rowSamples(8*n, 0), rowSamples(8*(n+n/2), 1)
	small, large := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range 5 { // in turn, so that both see the machine's load alike
		small, large = min(small, run(oldS, newS)), min(large, run(oldL, newL))
	}
	t.Logf("%d rows: %v, %d rows: %v", n, small, 8*n, large)
	if ratio := float64(large) / float64(small); ratio > 32 {
		t.Errorf("compare of %d rows took %v, of %d rows %v: %.1f times as long, want under 32 (linear: 8)", n, small, 8*n, large, ratio)
	}
}
