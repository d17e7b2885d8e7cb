package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// cycleRecords is a sweep of two sizes run three times (-N 3), each row
// ended a second after the one before it.
func cycleRecords() []Record {
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.Local)
	var recs []Record
	for run := 1; run <= 3; run++ {
		for _, size := range []int64{1024, 2048} {
			recs = append(recs, Record{Op: "allreduce", DType: "fp32", RedOp: "sum", Root: -1, Algo: "ring",
				Bytes: size, Count: size / 4, Iters: 20, TimeUS: float64(10 * run), AlgBW: 1, BusBW: 1, Run: run,
				Ended: at.Add(time.Duration(len(recs)) * time.Second)})
		}
	}
	return recs
}

func TestTableCyclesAndTimestamps(t *testing.T) {
	for _, both := range []bool{false, true} {
		t.Run(fmt.Sprintf("both=%v", both), func(t *testing.T) {
			h := fmtHeader()
			h.Placement, h.Runs, h.Cycles, h.Timestamps = "out", 3, true, true
			recs := cycleRecords()
			if both {
				h.Placement = "both"
				var paired []Record
				for _, r := range recs {
					in := r
					in.InPlace = true
					paired = append(paired, r, in)
				}
				recs = paired
			}
			var buf bytes.Buffer
			writeAll(t, NewTable(&buf), h, recs)
			out := buf.String()
			if !strings.Contains(out, "# cycles 3: the sweep runs 3 times (-N)") || strings.Contains(out, "median") {
				t.Errorf("header does not say the cycles are each printed:\n%s", out)
			}
			var names string
			var rows []string
			for _, l := range strings.Split(out, "\n") {
				switch {
				case strings.HasPrefix(l, "# cycle "):
					names = l
				case l != "" && !strings.HasPrefix(l, "#"):
					rows = append(rows, l)
				}
			}
			if !strings.HasSuffix(names, "  timestamp") {
				t.Errorf("column names %q: want cycle first and timestamp last", names)
			}
			if len(rows) != 6 {
				t.Fatalf("%d rows, want every cycle's 2:\n%s", len(rows), out)
			}
			for i, row := range rows {
				f := strings.Fields(row)
				if want := fmt.Sprint(i/2 + 1); f[0] != want {
					t.Errorf("row %d: cycle %q, want %s: %q", i, f[0], want, row)
				}
				stamp := recs[len(recs)/6*(i+1)-1].Ended.Format("2006-01-02 15:04:05")
				if !strings.HasSuffix(row, "  "+stamp) {
					t.Errorf("row %d %q: want it to end with %q", i, row, stamp)
				}
				// The cycle and the timestamp stand under their names.
				if row[6] == ' ' || row[7] != ' ' || !strings.HasPrefix(names, "# cycle ") {
					t.Errorf("row %d: the cycle is not right-aligned under its name:\n%s\n%s", i, names, row)
				}
				if len(names)-len("timestamp") != strings.Index(names, "timestamp") || len(row)-len(stamp) != strings.Index(row, stamp) {
					t.Errorf("row %d: the timestamp is not the last column:\n%s\n%s", i, names, row)
				}
			}
		})
	}
}

func TestTableMemory(t *testing.T) {
	h := fmtHeader()
	h.Memory = "sweep buffers 2.0MiB | total 2.0MiB, for the 8 ranks on this machine"
	var buf bytes.Buffer
	writeAll(t, NewTable(&buf), h, nil)
	if !strings.Contains(buf.String(), "\n# memory (estimated, as --dry-run): "+h.Memory+"\n") {
		t.Errorf("no memory line:\n%s", buf.String())
	}
}

func TestTimestampColumn(t *testing.T) {
	recs := cycleRecords()
	for _, on := range []bool{false, true} {
		h := fmtHeader()
		h.Timestamps = on
		var buf bytes.Buffer
		writeAll(t, NewCSV(&buf), h, recs)
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		ts, run := slices.Index(rows[0], "timestamp"), slices.Index(rows[0], "run")
		for i, r := range recs {
			want := ""
			if on {
				want = r.Ended.Format(TimestampFormat)
			}
			if got := rows[i+1][ts]; got != want {
				t.Errorf("-S %v: row %d timestamp %q, want %q", on, i, got, want)
			}
			if got := rows[i+1][run]; got != fmt.Sprint(r.Run) {
				t.Errorf("row %d run %q, want its cycle %d", i, got, r.Run)
			}
		}
	}
}

func TestBenchFmtCycles(t *testing.T) {
	h := fmtHeader()
	h.Runs, h.Cycles = 3, true
	var buf bytes.Buffer
	writeAll(t, NewBenchFmt(&buf), h, cycleRecords())
	var got []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(l, "# cycle") {
			got = append(got, l)
		} else if strings.HasPrefix(l, "Benchmark") && strings.Contains(l, "cycle") {
			t.Errorf("the cycle is in a result's name, where benchstat would not pair the cycles: %q", l)
		}
	}
	if want := []string{"# cycle 1", "# cycle 2", "# cycle 3"}; !slices.Equal(got, want) {
		t.Errorf("cycle lines %q, want %q", got, want)
	}
}
