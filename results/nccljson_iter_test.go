package results

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// perIterKeys are the fields of nccl-tests 2.19's out_of_place_per_iter and
// in_place_per_iter (src/util.cu, writePerIterReport), in its order;
// per_process_max_times_us only with more than one process.
var perIterKeys = []string{"skipped_iterations", "min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us",
	"stdev_us", "cv_pct", "times_us", "per_process_max_times_us"}

// TestNCCLJSONPerIter: with -I (Header.Stats) and the ranks' iteration
// times, -J writes each placement's *_per_iter object after it, with
// nccl-tests 2.19's fields, in its order, and its figures: times_us the
// slowest rank per iteration, per_process_max_times_us the slowest of
// each process's ranks, the statistics as its computeIterStats gives
// them; config.per_iter_timing says "true". Without -I, neither.
func TestNCCLJSONPerIter(t *testing.T) {
	out := Record{Op: "allreduce", DType: "fp32", RedOp: "sum", Root: -1, Bytes: 4096, Count: 1024, Iters: 4,
		TimeUS: 5, AlgBW: 1, BusBW: 1.5, Wrong: 0,
		// 4 ranks, 2 a process: times_us is 4 5 6 20, process 0's 4 5 3 20.
		RankIterUS: [][]float64{{4, 1, 3, 2}, {1, 5, 1, 20}, {2, 2, 6, 1}, {3, 1, 2, 1}}}
	in := out
	in.InPlace = true
	for _, tc := range []struct {
		name       string
		stats      bool
		perProcess int
		inProcess  bool
		keys       []string // keys of out_of_place_per_iter; nil: absent
	}{
		{"-I, 2 processes", true, 2, false, perIterKeys},
		{"-I, one process", true, 0, true, perIterKeys[:len(perIterKeys)-1]},
		{"-I, a rank a process", true, 1, false, perIterKeys},
		{"no -I", false, 2, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fmtHeader()
			h.Ranks, h.Stats = 4, tc.stats
			recs := []Record{out, in}
			if !tc.stats {
				for i := range recs {
					recs[i].RankIterUS = nil
				}
			}
			var buf bytes.Buffer
			writeAll(t, NewNCCLJSON(&buf, NCCLJSONRun{StepFactor: 2, PerProcess: tc.perProcess, InProcess: tc.inProcess}), h, recs)
			var rep struct {
				Config struct {
					PerIterTiming string `json:"per_iter_timing"`
				} `json:"config"`
				Results []json.RawMessage `json:"results"`
			}
			if err := json.Unmarshal(buf.Bytes(), &rep); err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			if want := map[bool]string{true: "true", false: "false"}[tc.stats]; rep.Config.PerIterTiming != want {
				t.Errorf("per_iter_timing %q, want %q", rep.Config.PerIterTiming, want)
			}
			if len(rep.Results) != 1 {
				t.Fatalf("%d results, want 1", len(rep.Results))
			}
			resKeys := []string{"size", "count", "type", "redop", "root", "out_of_place", "in_place", "actual_iterations", "experiment_name"}
			if tc.keys != nil {
				resKeys = []string{"size", "count", "type", "redop", "root", "out_of_place", "out_of_place_per_iter",
					"in_place", "in_place_per_iter", "actual_iterations", "experiment_name"}
			}
			if got := orderedKeys(t, rep.Results[0]); !slices.Equal(got, resKeys) {
				t.Errorf("result keys %q, want %q", got, resKeys)
			}
			if tc.keys == nil {
				return
			}
			var res map[string]json.RawMessage
			_ = json.Unmarshal(rep.Results[0], &res)
			for _, key := range []string{"out_of_place_per_iter", "in_place_per_iter"} {
				if got := orderedKeys(t, res[key]); !slices.Equal(got, tc.keys) {
					t.Errorf("%s keys %q, want %q", key, got, tc.keys)
				}
				var pi struct {
					Skipped                                 int
					Min, Max, Avg, P50, P95, P99, Stdev, CV float64
					Times                                   []float64
					PerProcess                              [][]float64
				}
				var raw map[string]json.RawMessage
				_ = json.Unmarshal(res[key], &raw)
				for k, dst := range map[string]any{"skipped_iterations": &pi.Skipped, "min_us": &pi.Min, "max_us": &pi.Max,
					"avg_us": &pi.Avg, "p50_us": &pi.P50, "p95_us": &pi.P95, "p99_us": &pi.P99, "stdev_us": &pi.Stdev,
					"cv_pct": &pi.CV, "times_us": &pi.Times, "per_process_max_times_us": &pi.PerProcess} {
					if raw[k] != nil {
						if err := json.Unmarshal(raw[k], dst); err != nil {
							t.Fatalf("%s.%s: %v", key, k, err)
						}
					}
				}
				// times 4 5 6 20: mean 8.75, sorted 4 5 6 20, p50 the element
				// at 2, p95 and p99 at min(3, ceil(4p/100)-1) = 3;
				// population stddev sqrt((4.75²+3.75²+2.75²+11.25²)/4) = sqrt(42.6875).
				want := struct{ min, max, avg, p50, p95, p99, stdev float64 }{4, 20, 8.75, 6, 20, 20, 6.53356717268599}
				if pi.Skipped != 0 || pi.Min != want.min || pi.Max != want.max || pi.Avg != want.avg || pi.P50 != want.p50 ||
					pi.P95 != want.p95 || pi.P99 != want.p99 || !sameField(jnum(pi.Stdev), jnum(want.stdev)) ||
					!sameField(jnum(pi.CV), jnum(want.stdev/want.avg*100)) || !slices.Equal(pi.Times, []float64{4, 5, 6, 20}) {
					t.Errorf("%s = %+v, want %+v, cv %v, times 4 5 6 20", key, pi, want, want.stdev/want.avg*100)
				}
				var wantProc [][]float64
				switch tc.perProcess {
				case 2:
					wantProc = [][]float64{{4, 5, 3, 20}, {3, 2, 6, 1}}
				case 1:
					wantProc = out.RankIterUS
				}
				if !slices.EqualFunc(pi.PerProcess, wantProc, slices.Equal) {
					t.Errorf("%s per_process_max_times_us %v, want %v", key, pi.PerProcess, wantProc)
				}
			}
		})
	}
}

// orderedKeys returns the keys of the JSON object raw, in order.
func orderedKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
