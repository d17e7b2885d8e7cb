package results

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestNCCLAvgBusBW: the table's footer gives nccl-tests' "Avg bus
// bandwidth" line, in its format, over every record of every size and
// placement (the figure -J writes), with OK or FAILED against
// NCCL_TESTS_MIN_BW at nccl-tests' 0.9; the 1 MiB mean beside it says so
// in its label; -J's average_bus_bandwidth.okay says the same.
func TestNCCLAvgBusBW(t *testing.T) {
	// Two small rows at 1 and 3 GB/s, one big at 8: nccl-tests' mean is 4,
	// the mean of the rows of 1 MiB and more 8.
	recs := []Record{record(1024, false), record(2048, false), record(2<<20, false)}
	for i, bw := range []float64{1, 3, 8} {
		recs[i].BusBW, recs[i].AlgBW = bw, bw
	}
	for _, tc := range []struct {
		name     string
		min      float64
		line     string // nccl-tests' footer line
		okay     string // -J's average_bus_bandwidth.okay
		failsRun bool
	}{
		{"unchecked", 0, "# Avg bus bandwidth    : 4\n", "unchecked", false},
		{"above", 4 / 0.9, "# Avg bus bandwidth    : 4 OK\n", "true", false},
		{"below", 4/0.9 + 0.01, "# Avg bus bandwidth    : 4 FAILED\n", "false", true},
		{"far below", 100, "# Avg bus bandwidth    : 4 FAILED\n", "false", true},
		{"far above", 0.5, "# Avg bus bandwidth    : 4 OK\n", "true", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := header("out", false)
			h.MinBusBW = tc.min
			var s Summary
			for _, r := range recs {
				s.Add(r)
			}
			out := render(t, h, recs, s)
			if !strings.Contains(out, tc.line) {
				t.Errorf("footer lacks %q:\n%s", tc.line, out)
			}
			if want := "# avg bus bandwidth (rows >= 1 MiB): 8.0000 GB/s"; !strings.Contains(out, want) {
				t.Errorf("footer lacks %q:\n%s", want, out)
			}
			if got := BelowMin(s.AllBusBW, tc.min); got != tc.failsRun {
				t.Errorf("BelowMin(%v, %v) = %v, want %v", s.AllBusBW, tc.min, got, tc.failsRun)
			}
			var buf bytes.Buffer
			j := NewNCCLJSON(&buf, NCCLJSONRun{})
			if err := j.Begin(h); err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if err := j.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.End(s); err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Avg struct {
					Bandwidth float64 `json:"bandwidth"`
					Okay      string  `json:"okay"`
				} `json:"average_bus_bandwidth"`
			}
			if err := json.Unmarshal(buf.Bytes(), &rep); err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			if rep.Avg.Bandwidth != s.AllBusBW || rep.Avg.Okay != tc.okay {
				t.Errorf("average_bus_bandwidth %+v, want {%v %s}", rep.Avg, s.AllBusBW, tc.okay)
			}
		})
	}
}
