package results

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func header(placement string, stats bool) Header {
	return Header{
		Version: "test", Backend: "shm", Ranks: 8, Algo: "auto", Placement: placement,
		Ops: []string{"allreduce"}, DTypes: []string{"fp16"}, RedOps: []string{"sum"},
		Sweep: "1024..2048 B by factor 2 (2 sizes)", Iters: 20, Warmup: 5, Check: true,
		Timeout: time.Minute, LinkGBps: 20, LinkSource: "given as 20GB/s", Stats: stats,
	}
}

func record(bytes int64, inPlace bool) Record {
	return Record{
		Op: "allreduce", DType: "fp16", RedOp: "sum", Root: -1, Algo: "ring", InPlace: inPlace,
		Bytes: bytes, Count: bytes / 2, Iters: 20, TimeUS: 12.5, MinUS: 10, P50US: 12, P99US: 20, MaxUS: 21,
		AlgBW: 1.5, BusBW: 2.625, Util: 2.625 / 20, Wrong: 0,
	}
}

// tableRows returns the lines of a table that are rows: not comments.
func tableRows(out string) []string {
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	return rows
}

func render(t *testing.T, h Header, recs []Record, s Summary) string {
	t.Helper()
	var buf bytes.Buffer
	tb := NewTable(&buf)
	if err := tb.Begin(h); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := tb.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.End(s); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestTableRows(t *testing.T) {
	var s Summary
	recs := []Record{record(1024, false), record(2<<20, false)}
	for _, r := range recs {
		s.Add(r)
	}
	out := render(t, header("out", false), recs, s)
	for _, want := range []string{
		"# backend shm  ranks 8  algo auto  placement out  check on",
		"# link bandwidth 20.00 GB/s (given as 20GB/s)",
		"#       size         count      type   redop  root          algo      time   algbw   busbw   util  #wrong",
		"        1024           512      fp16     sum    -1          ring     12.50    1.50    2.62    13.1       0",
		"# wrong elements: 0 OK",
		"# avg bus bandwidth (rows >= 1 MiB): 2.6250 GB/s (mean over the 1 row of at least 1 MiB)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestTableBothPlacementsShareALine(t *testing.T) {
	recs := []Record{record(1024, false), record(1024, true), record(2048, false), record(2048, true)}
	out := render(t, header("both", true), recs, Summary{})
	if !strings.Contains(out, "out-of-place") || !strings.Contains(out, "in-place") {
		t.Errorf("no placement group titles:\n%s", out)
	}
	rows := tableRows(out)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (one per size):\n%s", len(rows), out)
	}
	// 6 lead fields + 2 x (5 + slow, skew + 4 stats + stddev + model) fields.
	if f := strings.Fields(rows[0]); len(f) != 6+2*13 {
		t.Errorf("row has %d fields: %q", len(f), rows[0])
	}
}

func TestTableFooterOnFailure(t *testing.T) {
	r := record(1024, false)
	r.Wrong, r.Util = 7, math.NaN()
	var s Summary
	s.Add(r)
	s.Err = errors.New("allreduce (ring) rank 3: timed out")
	out := render(t, header("out", false), []Record{r}, s)
	for _, want := range []string{"# wrong elements: 7 FAILED", "# stopped early after 1 row: allreduce (ring) rank 3: timed out", "(mean over the 1 row shown; none is of 1 MiB or more", "     -       7"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSummaryAveragesBigRowsOnly(t *testing.T) {
	var s Summary
	for _, c := range []struct {
		bytes int64
		busbw float64
	}{{1024, 100}, {1 << 20, 2}, {4 << 20, 4}} {
		r := record(c.bytes, false)
		r.BusBW = c.busbw
		s.Add(r)
	}
	if s.Rows != 3 || s.BigRows != 2 || s.BigBusBW != 3 {
		t.Errorf("summary %+v, want 3 rows, 2 big, mean 3", s)
	}
}

// TestTableRetry: with re-execution on, the header says so, every row has
// a retry column, and the footer totals the re-runs.
func TestTableRetry(t *testing.T) {
	h := header("out", false)
	h.Retry = "up to 3 times (--retry)"
	recs := []Record{record(1024, false), record(2048, false)}
	recs[1].Retries = 2
	var s Summary
	for _, r := range recs {
		s.Add(r)
	}
	out := render(t, h, recs, s)
	lines := strings.Split(out, "\n")
	for _, want := range []string{"# retry: up to 3 times (--retry)", "  skew  retry", "# re-runs: 2 ops failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "        2048") && !strings.HasSuffix(l, "      2") {
			t.Errorf("row %q does not end with its 2 re-runs", l)
		}
	}
	if plain := render(t, header("out", false), recs, s); strings.Contains(plain, "retry") || strings.Contains(plain, "re-runs") {
		t.Errorf("retry shown with re-execution off:\n%s", plain)
	}
}

// TestTableInjectedWrong: the footer says how many of the wrong elements
// are messages --inject corrupted where the check could not see them.
func TestTableInjectedWrong(t *testing.T) {
	r := record(1024, false)
	r.Wrong, r.Injected, r.Util = 3, 2, math.NaN()
	var s Summary
	s.Add(r)
	out := render(t, header("out", false), []Record{r}, s)
	for _, want := range []string{"# wrong elements: 3 FAILED", "# of which 2 are messages corrupted by --inject"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// flushCounter counts Flush calls and fails the ones after the first
// failAfter.
type flushCounter struct {
	bytes.Buffer
	flushes, failAfter int
}

func (f *flushCounter) Flush() error {
	f.flushes++
	if f.flushes > f.failAfter {
		return errors.New("no space left on device")
	}
	return nil
}

// TestTableFlushes: the table flushes a buffering writer after its header,
// every row and its footer, as the other writers do, so that a row written
// is a row kept and a failed write is known at the row that failed.
func TestTableFlushes(t *testing.T) {
	w := &flushCounter{failAfter: 2}
	tb := NewTable(w)
	if err := tb.Begin(header("out", false)); err != nil || w.flushes != 1 {
		t.Fatalf("Begin: %v after %d flushes, want nil after 1", err, w.flushes)
	}
	if err := tb.Write(record(1024, false)); err != nil || w.flushes != 2 {
		t.Fatalf("Write: %v after %d flushes, want nil after 2", err, w.flushes)
	}
	if err := tb.Write(record(2048, false)); err == nil {
		t.Fatal("Write whose flush failed returned nil")
	}
	if err := tb.End(Summary{}); err == nil {
		t.Fatal("End after a failed flush returned nil")
	}
}
