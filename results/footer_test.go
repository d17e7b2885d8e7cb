package results

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestFooterAveragesRowsShown: the footer's mean bus bandwidth is over the
// rows the table shows (with --runs, each row's median, not every run's
// row), says which, and falls back to every row shown when none is of
// 1 MiB or more.
func TestFooterAveragesRowsShown(t *testing.T) {
	// rec is a run's measurement of a row of size bytes taking us
	// microseconds: its bus bandwidth is 40/us GB/s.
	rec := func(bytes int64, us float64, run int) Record {
		r := record(bytes, false)
		r.TimeUS, r.BusBW, r.AlgBW, r.Util, r.Run = us, 40/us, 40/us, 40/us/20, run
		return r
	}
	for _, tc := range []struct {
		name string
		runs int
		recs []Record
		want string
	}{
		{"medians of 3 runs", 3, []Record{
			rec(2<<20, 10, 1), rec(4<<20, 10, 1),
			rec(2<<20, 20, 2), rec(4<<20, 40, 2),
			rec(2<<20, 40, 3), rec(4<<20, 40, 3),
		}, // medians: 20 us (2 GB/s) and 40 us (1 GB/s); all runs' rows would give 1.875
			"# avg bus bandwidth (rows >= 1 MiB): 1.5000 GB/s (mean over the 2 rows of at least 1 MiB, each the median of its runs)\n"},
		{"big rows only", 1, []Record{rec(1024, 1, 1), rec(1<<20, 10, 1), rec(2<<20, 40, 1)},
			"# avg bus bandwidth (rows >= 1 MiB): 2.5000 GB/s (mean over the 2 rows of at least 1 MiB)\n"},
		{"no big row", 1, []Record{rec(1024, 10, 1), rec(2048, 40, 1)},
			"# avg bus bandwidth (rows shown): 2.5000 GB/s (mean over the 2 rows shown; none is of 1 MiB or more, so all count, though small rows measure latency more than bandwidth)\n"},
		{"no big row, 3 runs", 3, []Record{rec(1024, 10, 1), rec(1024, 20, 2), rec(1024, 40, 3)},
			"# avg bus bandwidth (rows shown): 2.0000 GB/s (mean over the 1 row shown, each the median of its runs; none is of 1 MiB or more"},
		{"nothing measured", 1, nil, "# avg bus bandwidth: no row measured\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := header("out", false)
			h.Runs = tc.runs
			var buf bytes.Buffer
			var sink Sink = NewTable(&buf)
			if tc.runs > 1 {
				sink = NewMedian(sink, tc.runs)
			}
			var s Summary
			if err := sink.Begin(h); err != nil {
				t.Fatal(err)
			}
			for _, r := range tc.recs {
				s.Add(r)
				if err := sink.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := sink.End(s); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), tc.want) {
				t.Errorf("footer lacks %q:\n%s", tc.want, buf.String())
			}
		})
	}
}

// TestFooterCountsInTheSingular: one row, op or message is not "1 rows".
func TestFooterCountsInTheSingular(t *testing.T) {
	h := header("out", false)
	h.Retry = "up to 1 time (--retry)"
	r := record(2<<20, false)
	r.Wrong, r.Injected, r.Retries = 1, 1, 1
	s := Summary{Err: errors.New("interrupted")}
	s.Add(r)
	out := render(t, h, []Record{r}, s)
	for _, want := range []string{"# of which 1 is a message corrupted", "# re-runs: 1 op failed", "(mean over the 1 row of at least 1 MiB)", "# stopped early after 1 row: "} {
		if !strings.Contains(out, want) {
			t.Errorf("footer lacks %q:\n%s", want, out)
		}
	}
	if got := Count(int64(3), "size"); got != "3 sizes" {
		t.Errorf("Count(3, size) = %q", got)
	}
}
