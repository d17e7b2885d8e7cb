package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"testing"
)

// ncclReport is the part of nccl-tests' JSON report (schema version 3)
// that the tests read, with its quirks: booleans as strings, the root as
// a padded string.
type ncclReport struct {
	Version     int      `json:"version"`
	StartTime   string   `json:"start_time"`
	Args        []string `json:"args"`
	Env         []string `json:"env"`
	NCCLVersion *int     `json:"nccl_version"`
	Config      struct {
		NThreads      int      `json:"nthreads"`
		NGPUs         int      `json:"ngpus"`
		MinimumBytes  int64    `json:"minimum_bytes"`
		MaximumBytes  int64    `json:"maximum_bytes"`
		StepFactor    *float64 `json:"step_factor"`
		StepBytes     *int64   `json:"step_bytes"`
		WarmupIters   int      `json:"warmup_iters"`
		Iterations    int      `json:"iterations"`
		Validation    int      `json:"validation"`
		Blocking      string   `json:"blocking_collectives"`
		PerIterTiming string   `json:"per_iter_timing"`
		ParallelInit  string   `json:"parallel_init"`
		Devices       []struct {
			Rank     int    `json:"rank"`
			Pid      *int   `json:"pid"`
			Hostname string `json:"hostname"`
		} `json:"devices"`
	} `json:"config"`
	Results []struct {
		Size       int64       `json:"size"`
		Count      int64       `json:"count"`
		Type       string      `json:"type"`
		RedOp      string      `json:"redop"`
		Root       string      `json:"root"`
		OutOfPlace *ncclFigure `json:"out_of_place"`
		InPlace    *ncclFigure `json:"in_place"`
		Iterations int         `json:"actual_iterations"`
		Experiment string      `json:"experiment_name"`
	} `json:"results"`
	OutOfBounds struct {
		Count int    `json:"count"`
		Okay  string `json:"okay"`
	} `json:"out_of_bounds"`
	AvgBusBW struct {
		Bandwidth *float64 `json:"bandwidth"`
		Okay      string   `json:"okay"`
	} `json:"average_bus_bandwidth"`
	Errors  []string `json:"errors"`
	EndTime string   `json:"end_time"`
}

// ncclFigure is one placement's measurement in the report.
type ncclFigure struct {
	Time   *float64 `json:"time"`
	AlgBW  *float64 `json:"alg_bw"`
	BusBW  *float64 `json:"bus_bw"`
	NWrong *float64 `json:"nwrong"`
}

func decodeNCCL(t *testing.T, b []byte) ncclReport {
	t.Helper()
	var rep ncclReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("the report does not decode as nccl-tests' schema: %v\n%s", err, b)
	}
	// Every key of the schema, and no other, at the top and in config.
	var keys struct {
		Top    map[string]json.RawMessage
		Config map[string]json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(b, &keys.Top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(keys.Top["config"], &keys.Config); err != nil {
		t.Fatal(err)
	}
	wantTop := []string{"args", "average_bus_bandwidth", "config", "end_time", "env", "errors", "nccl_version",
		"out_of_bounds", "results", "start_time", "version"}
	wantConfig := []string{"aggregated_iterations", "blocking_collectives", "devices", "graph", "iterations",
		"maximum_bytes", "minimum_bytes", "ngpus", "nthreads", "parallel_init", "per_iter_skip", "per_iter_timing",
		"validation", "warmup_iters"}
	step := "step_factor"
	if rep.Config.StepBytes != nil {
		step = "step_bytes"
	}
	wantConfig = append(wantConfig, step)
	slices.Sort(wantConfig)
	if got := slices.Sorted(maps.Keys(keys.Top)); !slices.Equal(got, wantTop) {
		t.Errorf("top-level keys %q, want %q", got, wantTop)
	}
	if got := slices.Sorted(maps.Keys(keys.Config)); !slices.Equal(got, wantConfig) {
		t.Errorf("config keys %q, want %q", got, wantConfig)
	}
	return rep
}

func TestNCCLJSON(t *testing.T) {
	// fmtCases: an out-of-place allreduce (checked), an in-place broadcast
	// alone (unchecked), and an out-of-place reducescatter with wrong
	// elements and NaN bandwidths; then a pair of one shape.
	recs := caseRecords()
	out := Record{Op: "allgather", DType: "bf16", RedOp: "none", Root: -1, Bytes: 4096, Count: 256, Iters: 20,
		TimeUS: 12.5, AlgBW: 0.32768, BusBW: 0.28672, Util: 0.5}
	in := out
	in.InPlace, in.TimeUS, in.AlgBW, in.BusBW, in.Wrong = true, 10, 0.4096, 0.3584, 0
	recs = append(recs, out, in)
	run := NCCLJSONRun{Args: []string{"hccl-test", "-b", "1K"}, Env: []string{"HCCL_BUFFSIZE=200"},
		MinBytes: 1000, MaxBytes: 1 << 20, StepFactor: 2, Pid: 42, InProcess: true}
	var buf bytes.Buffer
	writeAll(t, NewNCCLJSON(&buf, run), fmtHeader(), recs)
	rep := decodeNCCL(t, buf.Bytes())

	if rep.Version != 3 || rep.NCCLVersion != nil || !slices.Equal(rep.Args, run.Args) || !slices.Equal(rep.Env, run.Env) {
		t.Errorf("version %d, nccl_version %v, args %q, env %q", rep.Version, rep.NCCLVersion, rep.Args, rep.Env)
	}
	c := rep.Config
	if c.NGPUs != 8 || c.MinimumBytes != 1000 || c.MaximumBytes != 1<<20 || c.StepFactor == nil || *c.StepFactor != 2 ||
		c.StepBytes != nil || c.Iterations != 20 || c.WarmupIters != 5 || c.Validation != 1 || c.Blocking != "false" ||
		c.PerIterTiming != "false" || c.ParallelInit != "false" {
		t.Errorf("config %+v", c)
	}
	// As nccl-tests: one entry per process, ngpus ranks in each.
	if len(c.Devices) != 1 || c.Devices[0].Rank != 0 || c.Devices[0].Pid == nil || *c.Devices[0].Pid != 42 || c.Devices[0].Hostname != "node01" {
		t.Errorf("devices %+v: want one process of 8 ranks", c.Devices)
	}
	if len(rep.Results) != 4 {
		t.Fatalf("%d results, want 4 (the pair of one size in one)", len(rep.Results))
	}
	r0, r1, r2, r3 := rep.Results[0], rep.Results[1], rep.Results[2], rep.Results[3]
	if r0.Root != "    -1" || r1.Root != "     3" || r0.Type != "half" || r1.Type != "float" || r2.Type != "int32" || r3.Type != "bfloat16" {
		t.Errorf("roots %q %q, types %q %q %q %q", r0.Root, r1.Root, r0.Type, r1.Type, r2.Type, r3.Type)
	}
	if r0.OutOfPlace == nil || r0.InPlace != nil || r1.OutOfPlace != nil || r1.InPlace == nil || r3.OutOfPlace == nil || r3.InPlace == nil {
		t.Fatalf("placements: %+v %+v %+v", r0, r1, r3)
	}
	if r1.InPlace.NWrong != nil || r0.OutOfPlace.NWrong == nil || *r2.OutOfPlace.NWrong != 7 {
		t.Errorf("nwrong: unchecked %v, checked %v, wrong %v", r1.InPlace.NWrong, r0.OutOfPlace.NWrong, r2.OutOfPlace.NWrong)
	}
	if r2.OutOfPlace.AlgBW != nil || r3.Size != 4096 || r3.Count != 256 || *r3.InPlace.Time != 10 || *r3.OutOfPlace.Time != 12.5 {
		t.Errorf("NaN algbw %v; pair %+v %+v", r2.OutOfPlace.AlgBW, *r3.OutOfPlace, *r3.InPlace)
	}
	if rep.OutOfBounds.Count != 1 || rep.OutOfBounds.Okay != "false" || rep.AvgBusBW.Okay != "unchecked" || rep.EndTime == "" {
		t.Errorf("footer %+v %+v %q", rep.OutOfBounds, rep.AvgBusBW, rep.EndTime)
	}
	// nccl-tests' average: over every record with a bus bandwidth.
	if want := (0.16405 + 0.07292 + 0.28672 + 0.3584) / 4; rep.AvgBusBW.Bandwidth == nil || !sameField(strconv.FormatFloat(*rep.AvgBusBW.Bandwidth, 'g', -1, 64), strconv.FormatFloat(want, 'g', -1, 64)) {
		t.Errorf("average bus bandwidth %v, want %v", rep.AvgBusBW.Bandwidth, want)
	}

	// The figures are the CSV's, digit for digit.
	var cbuf bytes.Buffer
	writeAll(t, NewCSV(&cbuf), fmtHeader(), recs)
	rows, err := csv.NewReader(&cbuf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	figures := []*ncclFigure{r0.OutOfPlace, r1.InPlace, r2.OutOfPlace, r3.OutOfPlace, r3.InPlace}
	for i, f := range figures {
		row := rows[i+1]
		for _, p := range []struct {
			name string
			v    *float64
		}{{"time_us", f.Time}, {"algbw_GBps", f.AlgBW}, {"busbw_GBps", f.BusBW}, {"wrong", f.NWrong}} {
			got := ""
			if p.v != nil {
				got = strconv.FormatFloat(*p.v, 'f', -1, 64)
			}
			if want := row[col(p.name)]; got != want {
				t.Errorf("record %d: %s %q in the report, %q in the CSV", i, p.name, got, want)
			}
		}
	}
}

func TestNCCLJSONEndsObject(t *testing.T) {
	// A run that stops early still writes a whole object, its error in
	// "errors"; with no rows the results list is empty.
	var buf bytes.Buffer
	j := NewNCCLJSON(&buf, NCCLJSONRun{StepBytes: 1024, Pid: 7}) // ranks in processes of their own
	if err := j.Begin(fmtHeader()); err != nil {
		t.Fatal(err)
	}
	if err := j.End(Summary{Err: errors.New("interrupted\nby a signal")}); err != nil {
		t.Fatal(err)
	}
	rep := decodeNCCL(t, buf.Bytes())
	if len(rep.Results) != 0 || !slices.Equal(rep.Errors, []string{"interrupted; by a signal"}) || rep.Config.StepBytes == nil || rep.Config.StepFactor != nil {
		t.Errorf("results %d, errors %q, step %v %v", len(rep.Results), rep.Errors, rep.Config.StepBytes, rep.Config.StepFactor)
	}
	if d := rep.Config.Devices; d[0].Pid == nil || *d[0].Pid != 7 || d[0].Hostname != "node01" || d[1].Pid != nil || d[1].Hostname != "" {
		t.Errorf("devices %+v: want rank 0's process and host, the others' unknown", d)
	}
	if rep.AvgBusBW.Bandwidth == nil || *rep.AvgBusBW.Bandwidth != 0 || rep.OutOfBounds.Okay != "true" {
		t.Errorf("footer %+v %+v", rep.AvgBusBW, rep.OutOfBounds)
	}
}

func TestNCCLJSONDevicesPerProcess(t *testing.T) {
	// nccl-tests lists one device entry per process, the first of its
	// ngpus ranks; convert reads ranks back as processes x nthreads x
	// ngpus, so the report must say the world it measured either way.
	cases := []struct {
		name      string
		run       NCCLJSONRun
		wantRanks []int
		wantGPUs  int
	}{
		{"one process of 8 ranks", NCCLJSONRun{InProcess: true}, []int{0}, 8},
		{"8 processes of one rank", NCCLJSONRun{}, []int{0, 1, 2, 3, 4, 5, 6, 7}, 1},
		{"4 processes of 2 ranks", NCCLJSONRun{PerProcess: 2}, []int{0, 2, 4, 6}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			recs := []Record{{Op: "allreduce", DType: "fp16", RedOp: "sum", Root: -1, Bytes: 1 << 20, Count: 1 << 19,
				Iters: 20, TimeUS: 500, AlgBW: 2.097, BusBW: 3.67, Util: math.NaN()}}
			writeAll(t, NewNCCLJSON(&buf, c.run), fmtHeader(), recs)
			rep := decodeNCCL(t, buf.Bytes())
			var ranks []int
			for _, d := range rep.Config.Devices {
				ranks = append(ranks, d.Rank)
			}
			if !slices.Equal(ranks, c.wantRanks) || rep.Config.NGPUs != c.wantGPUs {
				t.Errorf("devices of ranks %v, ngpus %d; want %v, %d", ranks, rep.Config.NGPUs, c.wantRanks, c.wantGPUs)
			}
			runs, _ := LogRuns("j.json", buf.Bytes())
			if len(runs) != 1 || runs[0].Header.Ranks != 8 || len(runs[0].Records) != 1 || runs[0].Records[0].TimeUS != 500 {
				t.Fatalf("read back: %+v", runs)
			}
		})
	}
}

func TestNCCLJSONMethod(t *testing.T) {
	// The config says how the rows were measured: -m, -c N and -z 1.
	h := fmtHeader()
	h.AggIters, h.CheckIters, h.Blocking = 4, 3, 1
	var buf bytes.Buffer
	writeAll(t, NewNCCLJSON(&buf, NCCLJSONRun{InProcess: true}), h, nil)
	var rep struct {
		Config struct {
			Agg      int    `json:"aggregated_iterations"`
			Check    int    `json:"validation"`
			Blocking string `json:"blocking_collectives"`
		} `json:"config"`
	}
	if err := json.Unmarshal(buf.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if c := rep.Config; c.Agg != 4 || c.Check != 3 || c.Blocking != "true" {
		t.Errorf("config %+v, want aggregated_iterations 4, validation 3, blocking true", c)
	}
}
