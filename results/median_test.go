package results

import (
	"math"
	"testing"
)

// collect is a Sink that keeps what it is given.
type collect struct {
	recs  []Record
	ended bool
}

func (c *collect) Begin(Header) error   { return nil }
func (c *collect) Write(r Record) error { c.recs = append(c.recs, r); return nil }
func (c *collect) End(Summary) error    { c.ended = true; return nil }

func TestMedianOfRuns(t *testing.T) {
	var c collect
	m := NewMedian(&c, 3)
	rec := func(bytes int64, run int, us, algbw float64, wrong int64) Record {
		r := record(bytes, false)
		r.Run, r.TimeUS, r.AlgBW, r.BusBW, r.Util, r.Wrong = run, us, algbw, 2*algbw, algbw/10, wrong
		return r
	}
	// Run-major order, as a repeated sweep measures: 1 KiB and 2 KiB rows.
	in := []Record{
		rec(1024, 1, 10, 1.0, 0), rec(2048, 1, 40, 0.5, 0),
		rec(1024, 2, 30, 1.0/3, 1), rec(2048, 2, 20, 1.0, 0),
		rec(1024, 3, 20, 0.5, 0), rec(2048, 3, 80, 0.25, 2),
	}
	for i, r := range in {
		if err := m.Write(r); err != nil {
			t.Fatal(err)
		}
		// Nothing passes on before a row's last run.
		if i < 4 && len(c.recs) != 0 {
			t.Fatalf("row passed on after %d records", i+1)
		}
	}
	if err := m.End(Summary{}); err != nil {
		t.Fatal(err)
	}
	if len(c.recs) != 2 || !c.ended {
		t.Fatalf("got %d rows (ended %v), want 2", len(c.recs), c.ended)
	}
	want := []struct {
		bytes     int64
		us, algbw float64
		wrong     int64
	}{{1024, 20, 0.5, 1}, {2048, 40, 0.5, 2}}
	for i, w := range want {
		got := c.recs[i]
		if got.Bytes != w.bytes || got.TimeUS != w.us || math.Abs(got.AlgBW-w.algbw) > 1e-12 ||
			math.Abs(got.BusBW-2*w.algbw) > 1e-12 || got.Wrong != w.wrong {
			t.Errorf("row %d: got %d B %v us %v GB/s %d wrong; want %+v", i, got.Bytes, got.TimeUS, got.AlgBW, got.Wrong, w)
		}
	}
}

func TestMedianFlushesAnInterruptedRun(t *testing.T) {
	var c collect
	m := NewMedian(&c, 5)
	r := record(1024, false)
	r.Run = 1
	if err := m.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := m.End(Summary{}); err != nil {
		t.Fatal(err)
	}
	if len(c.recs) != 1 || c.recs[0].TimeUS != r.TimeUS {
		t.Fatalf("an interrupted run's row was lost: %+v", c.recs)
	}
}
