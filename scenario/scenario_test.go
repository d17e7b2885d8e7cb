package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/units"
	"github.com/hccl-test/hccl-test/world"
)

// goodScenario is the README's dense example, which every parse case below
// edits.
const goodScenario = `{
  "name": "dense TP+DP training step",
  "ranks": 8,
  "groups": "tp=4,dp=2",
  "iterations": 20,
  "warmup": 3,
  "slowdown": "50%",
  "steps": [
    {"name": "forward", "compute": "3ms"},
    {"name": "tp allreduce (activations)", "group": "tp", "op": "allreduce", "dtype": "bf16", "size": "8M", "count": 4},
    {"name": "backward", "compute": "6ms"},
    {"name": "dp allreduce (gradients)", "group": "dp", "op": "allreduce", "dtype": "fp32", "size": "64M", "overlap": true}
  ]
}`

// TestParseScenario parses the good file, then one mistake of each kind,
// each with its exact message.
func TestParseScenario(t *testing.T) {
	sc, err := Parse([]byte(goodScenario), Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{
		{Name: "forward", Compute: 3 * time.Millisecond, Root: -1},
		{Name: "tp allreduce (activations)", Group: "tp", Op: coll.AllReduce, DType: dtype.BF16, RedOp: dtype.Sum,
			Root: -1, Bytes: 8 << 20, Elems: 4 << 20, Calls: 4},
		{Name: "backward", Compute: 6 * time.Millisecond, Root: -1},
		{Name: "dp allreduce (gradients)", Group: "dp", Op: coll.AllReduce, DType: dtype.FP32, RedOp: dtype.Sum,
			Root: -1, Bytes: 64 << 20, Elems: 16 << 20, Calls: 1, Overlap: true},
	}
	if sc.Ranks != 8 || sc.Iterations != 20 || sc.Warmup != 3 || sc.Slowdown != 50 || sc.LayoutString() != "tp=4 dp=2" {
		t.Errorf("got %+v", sc)
	}
	if fmt.Sprint(sc.Steps) != fmt.Sprint(want) {
		t.Errorf("steps\n got %+v\nwant %+v", sc.Steps, want)
	}
	if d := sc.Domains(); strings.Join(d, ",") != "tp,dp" {
		t.Errorf("domains %v", d)
	}

	// edit replaces old by new in the good file.
	edit := func(old, new string) string {
		if !strings.Contains(goodScenario, old) {
			t.Fatalf("the good file has no %q", old)
		}
		return strings.Replace(goodScenario, old, new, 1)
	}
	tests := []struct {
		name, file string
		ov         Overrides
		want       string
	}{
		{"syntax", edit(`"ranks": 8,`, `"ranks": 8`), Overrides{}, `line 4, column 3: invalid character '"' after object key:value pair`},
		{"not closed", goodScenario[:40], Overrides{}, "the JSON ends early (an object or string is not closed)"},
		{"trailing", goodScenario + "{}", Overrides{}, "more after the JSON object (want exactly one object)"},
		{"unknown field", edit(`"warmup"`, `"warmpu"`), Overrides{}, `unknown field "warmpu"`},
		{"unknown step field", edit(`"count": 4`, `"cuont": 4`), Overrides{}, `step 2: unknown field "cuont"`},
		{"wrong type", edit(`"ranks": 8`, `"ranks": "8"`), Overrides{}, `field "ranks": want a JSON number, got string`},
		{"wrong step type", edit(`"overlap": true`, `"overlap": "yes"`), Overrides{}, `step 4: field "overlap": want a JSON boolean (true or false), got string`},
		{"no ranks", edit(`"ranks": 8,`, ``), Overrides{}, `ranks: missing (the world size, e.g. "ranks": 8)`},
		{"zero ranks", edit(`"ranks": 8`, `"ranks": 0`), Overrides{}, "ranks 0: want 1 to 4096 ranks"},
		{"bad -p", goodScenario, Overrides{Ranks: 6, RanksFrom: "-p 6"}, `groups "tp=4,dp=2": the sizes multiply to 8, not the 6 ranks of the world (-p 6)`},
		{"product", edit(`"ranks": 8`, `"ranks": 16`), Overrides{}, `groups "tp=4,dp=2": the sizes multiply to 8, not the 16 ranks of the world (ranks 16)`},
		{"group kind", edit(`tp=4,dp=2`, `tp=4,xp=2`), Overrides{}, `groups "tp=4,xp=2": unknown kind "xp" (want tp cp ep dp pp)`},
		{"group syntax", edit(`tp=4,dp=2`, `tp4,dp=2`), Overrides{}, `groups "tp4,dp=2": "tp4" is not KIND=SIZE (kinds: tp cp ep dp pp)`},
		{"iterations", edit(`"iterations": 20`, `"iterations": 0`), Overrides{}, "iterations 0: want 1 to 1000 timed iterations"},
		{"--iters", goodScenario, Overrides{Iterations: 5000}, "--iters 5000: want 1 to 1000 timed iterations"},
		{"warmup", edit(`"warmup": 3`, `"warmup": -1`), Overrides{}, "warmup -1: want 0 to 1000 iterations"},
		{"slowdown", edit(`"50%"`, `"50"`), Overrides{}, `slowdown: "50": want a percentage such as 50%`},
		{"--slowdown", goodScenario, Overrides{Slowdown: "0%"}, `--slowdown: "0%": want 1% to 1000%`},
		{"no steps", edit(goodScenario[strings.Index(goodScenario, `"steps"`):], `"steps": []}`), Overrides{}, "steps: none given (want a list of compute phases and collectives)"},
		{"overlap after a collective", edit(`{"name": "backward", "compute": "6ms"},`, ``), Overrides{},
			`step 3 "dp allreduce (gradients)": overlap: an overlapped collective must come right after a compute phase (it is started before that phase and waited for after it)`},
		{"overlap first", edit(`{"name": "forward", "compute": "3ms"},`, `{"name": "x", "group": "dp", "op": "allreduce", "size": "1M", "overlap": true},`), Overrides{},
			`step 1 "x": overlap: an overlapped collective must come right after a compute phase (it is started before that phase and waited for after it)`},
		{"no collective", `{"ranks": 1, "steps": [{"compute": "1ms"}]}`, Overrides{}, "steps: no collective among them: nothing to measure"},
		{"unnamed step", `{"ranks": 1, "steps": [{"op": "allreduce", "size": "1K"}]}`, Overrides{}, "step 1: group: missing (want world)"},
		{"not an object", `[1, 2]`, Overrides{}, "want a JSON object, got array"},
		{"step not an object", `{"ranks": 1, "steps": [3]}`, Overrides{}, "step 1: want a JSON object, got number"},
		{"size type", edit(`"8M"`, `true`), Overrides{}, `step 2 "tp allreduce (activations)": size "true": not a number with an optional K/M/G/T suffix`},
		{"compute type", edit(`"3ms"`, `3`), Overrides{}, `step 1: field "compute": want a JSON string, got number`},
		{"too big", strings.Repeat(" ", 2<<20), Overrides{}, "2097152 bytes: a scenario file is at most 1048576"},
		{"compute and op", edit(`"compute": "3ms"`, `"compute": "3ms", "op": "allreduce"`), Overrides{},
			`step 1 "forward": a compute phase takes no op (a collective is a step of its own)`},
		{"neither", edit(`"compute": "3ms"`, `"size": "1M"`), Overrides{},
			`step 1 "forward": neither compute nor op: a step is a compute phase ("compute": "3ms") or a collective ("op": "allreduce", ...)`},
		{"duration", edit(`"3ms"`, `"3 ms"`), Overrides{}, `step 1 "forward": compute "3 ms": want a duration such as 500us or 3ms`},
		{"negative duration", edit(`"3ms"`, `"-3ms"`), Overrides{}, `step 1 "forward": compute "-3ms": want more than 0 and at most 10s`},
		{"overflowing duration", edit(`"3ms"`, `"9999999999h"`), Overrides{}, `step 1 "forward": compute "9999999999h": want more than 0 and at most 10s`},
		{"huge size", edit(`"8M"`, `"1e30"`), Overrides{}, `step 2 "tp allreduce (activations)": size "1e30": larger than the limit of 1125899906842624 bytes`},
		{"op", edit(`"op": "allreduce", "dtype": "bf16"`, `"op": "allreduse", "dtype": "bf16"`), Overrides{},
			`step 2 "tp allreduce (activations)": op: unknown collective "allreduse" (want one of allreduce allgather reducescatter broadcast reduce alltoall sendrecv gather scatter alltoallv allgatherv reducescatterv)`},
		{"variable op", edit(`"op": "allreduce", "dtype": "bf16"`, `"op": "alltoallv", "dtype": "bf16"`), Overrides{},
			`step 2 "tp allreduce (activations)": op alltoallv: its counts need "traffic" (docs/traffic.md: "zipf:s=1.2,tokens=0", ...)`},
		{"traffic on a fixed op", edit(`"op": "allreduce", "dtype": "bf16"`, `"op": "allreduce", "traffic": "zipf", "dtype": "bf16"`), Overrides{},
			`step 2 "tp allreduce (activations)": traffic "zipf": allreduce takes no counts (alltoallv, allgatherv and reducescatterv do)`},
		{"bad traffic", edit(`"op": "allreduce", "dtype": "bf16"`, `"op": "alltoallv", "traffic": "zipf:s=-1", "dtype": "bf16"`), Overrides{},
			`step 2 "tp allreduce (activations)": traffic: traffic "zipf:s=-1": s=-1: want a number from 0 to 100`},
		{"no group", edit(`"group": "tp", `, ``), Overrides{}, `step 2 "tp allreduce (activations)": group: missing (want tp, dp, world)`},
		{"group", edit(`"group": "tp"`, `"group": "ep"`), Overrides{}, `step 2 "tp allreduce (activations)": group "ep": not among the file's groups (want tp, dp, world)`},
		{"group name", edit(`"group": "tp"`, `"group": "tensor"`), Overrides{}, `step 2 "tp allreduce (activations)": group "tensor": unknown (want tp, dp, world)`},
		{"dtype", edit(`"bf16"`, `"bf17"`), Overrides{},
			`step 2 "tp allreduce (activations)": dtype: unknown data type "bf17" (want one of int8 uint8 int16 uint16 int32 uint32 int64 uint64 fp16 bf16 fp32 fp64 f8e4m3 f8e5m2)`},
		{"redop", edit(`"dtype": "bf16"`, `"dtype": "bf16", "redop": "mean"`), Overrides{},
			`step 2 "tp allreduce (activations)": redop: unknown reduction "mean" (want one of sum prod max min avg mulsum)`},
		{"redop of allgather", edit(`"op": "allreduce", "dtype": "bf16"`, `"op": "allgather", "redop": "max", "dtype": "bf16"`), Overrides{},
			`step 2 "tp allreduce (activations)": redop "max": allgather does not reduce (allreduce, reduce and reducescatter do)`},
		{"root of allreduce", edit(`"dtype": "bf16"`, `"dtype": "bf16", "root": 1`), Overrides{},
			`step 2 "tp allreduce (activations)": root 1: allreduce has no root (broadcast, reduce, gather and scatter do)`},
		{"root", edit(`"op": "allreduce", "dtype": "bf16"`, `"op": "broadcast", "root": 4, "dtype": "bf16"`), Overrides{},
			`step 2 "tp allreduce (activations)": root 4: want a rank of the group, 0 to 3 (tp groups have 4 ranks)`},
		{"no size", edit(`, "size": "8M"`, ``), Overrides{}, `step 2 "tp allreduce (activations)": size: missing (bytes per rank as the sweep counts them, e.g. "8M")`},
		{"size", edit(`"8M"`, `"8Q"`), Overrides{}, `step 2 "tp allreduce (activations)": size "8Q": not a number with an optional K/M/G/T suffix`},
		{"huge size", edit(`"8M"`, `"2G"`), Overrides{}, `step 2 "tp allreduce (activations)": size "2G": at most 1.0GiB per collective`},
		{"tiny size", edit(`"op": "allreduce", "dtype": "bf16", "size": "8M"`, `"op": "allgather", "dtype": "bf16", "size": 6`), Overrides{},
			`step 2 "tp allreduce (activations)": size "6": less than one bf16 element per block (allgather on 4 ranks moves at least 8 bytes)`},
		{"count", edit(`"count": 4`, `"count": 0`), Overrides{}, `step 2 "tp allreduce (activations)": count 0: want 1 to 1000 calls per step`},
		// Whole numbers, said as such.
		{"fraction", edit(`"ranks": 8`, `"ranks": 2.5`), Overrides{}, `field "ranks": want a whole number, got 2.5`},
		{"exponent", edit(`"ranks": 8`, `"ranks": 8e0`), Overrides{}, `field "ranks": want a whole number written in digits, such as 8, got 8e0`},
		{"too large", edit(`"iterations": 20`, `"iterations": 1e30`), Overrides{}, `field "iterations": got 1e30, too large for a whole number`},
		{"step fraction", edit(`"count": 4`, `"count": 0.5`), Overrides{}, `step 2: field "count": want a whole number, got 0.5`},
		// A key given twice is refused, not taken last.
		{"duplicate key", edit(`"warmup": 3,`, `"warmup": 3, "ranks": 4,`), Overrides{}, `line 6: key "ranks" is given twice in one object (first on line 3)`},
		{"duplicate in another case", edit(`"warmup": 3,`, "\"warmup\": 3,\n  \"Ranks\": 4,"), Overrides{}, `line 7: key "Ranks" is given twice in one object (first on line 3)`},
		{"duplicate step key", edit(`"count": 4`, `"count": 4, "size": "1M"`), Overrides{}, `line 10: key "size" is given twice in one object (first on line 10)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file), tc.ov)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got error %v\nwant        %s", err, tc.want)
			}
		})
	}
}

// TestExampleScenarios parses the example files the README shows. Those
// under examples/sim are for a simulated world without payload
// (--sim-data=false), so their memory is not limited.
func TestExampleScenarios(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.json")
	simFiles, _ := filepath.Glob("../examples/sim/*.json")
	if len(files) < 2 || len(simFiles) < 1 {
		t.Fatalf("found %d example scenarios and %d for sim, want at least 2 and 1", len(files), len(simFiles))
	}
	for _, f := range append(files, simFiles...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Parse(data, Overrides{})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if need := sc.MemoryPerRank() * int64(sc.Ranks); need > 1<<30 && !slices.Contains(simFiles, f) {
			t.Errorf("%s: needs %s, more than an example should", f, units.HumanSize(need))
		}
	}
}

// smallScenario is 4 ranks as tp=2,dp=2: forward compute, a blocking tp
// allreduce, backward compute with the dp allreduce overlapping it.
const smallScenario = `{
  "name": "small", "ranks": 4, "groups": "tp=2,dp=2", "iterations": 10, "warmup": 1, "slowdown": "100%",
  "steps": [
    {"name": "forward", "compute": "1ms"},
    {"name": "tp allreduce", "group": "tp", "op": "allreduce", "dtype": "bf16", "size": "256K"},
    {"name": "backward", "compute": "1ms"},
    {"name": "dp allreduce", "group": "dp", "op": "allreduce", "dtype": "fp32", "size": "256K", "overlap": true},
    {"name": "tp allgather", "group": "tp", "op": "allgather", "dtype": "fp16", "size": "64K"}
  ]
}`

// TestScenarioCriticalDomain plants slow links in one domain (a bandwidth
// limit on its pairs of ranks, in every run) and checks that the scenario
// never names the other domain critical: it names the planted one, or, on
// a host whose load spreads the rounds or the probes too widely (10
// iterations are 5 rounds, the fewest a verdict is drawn from), says it
// cannot tell; every result is correct.
func TestScenarioCriticalDomain(t *testing.T) {
	// With tp fastest, tp groups are {0,1} and {2,3}; dp groups {0,2}
	// and {1,3}.
	pairs := map[string][][2]int{"tp": {{0, 1}, {2, 3}}, "dp": {{0, 2}, {1, 3}}}
	for _, slow := range []string{"dp", "tp"} {
		t.Run(slow, func(t *testing.T) {
			var clauses []string
			for _, p := range pairs[slow] {
				clauses = append(clauses, fmt.Sprintf("bw=25MB/s@link=%d-%d", p[0], p[1]), fmt.Sprintf("bw=25MB/s@link=%d-%d", p[1], p[0]))
			}
			text := strings.Join(clauses, ";")
			spec, err := inject.Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := Parse([]byte(smallScenario), Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			o := Options{World: world.World{Backend: "shm", Timeout: 30 * time.Second}, Faults: world.Faults{Inject: spec, InjectText: text, Seed: 1}}
			rep, err := Run(context.Background(), sc, o, &out)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("\n%s", out.String())
			if rep.Critical != slow && !(rep.Critical == "" && rep.CannotTell) {
				t.Errorf("critical domain %q (cannot tell %v), want %q (planted) or cannot tell", rep.Critical, rep.CannotTell, slow)
			}
			if rep.Wrong != 0 || !strings.Contains(out.String(), "# wrong elements: 0 OK") {
				t.Errorf("%d wrong elements", rep.Wrong)
			}
			if !strings.Contains(out.String(), "# critical domain: "+slow+" ") && !strings.Contains(out.String(), "# critical domain: cannot tell (") {
				t.Errorf("the report neither names %s critical nor says it cannot tell", slow)
			}
			for _, d := range rep.Domains {
				if d.CommMS <= 0 || d.ExposedMS < 0 || d.ExposedMS > d.CommMS*1.01+0.01 || !d.Links || d.SlowedStepMS <= 0 {
					t.Errorf("implausible %+v", d)
				}
			}
			if rep.ComputeMS <= 0 || rep.StepMS < rep.ComputeMS {
				t.Errorf("step %.2f ms, compute %.2f ms", rep.StepMS, rep.ComputeMS)
			}
		})
	}
}

// TestScenarioJSONAndOneRank runs a world of one rank (no links: no
// sensitivity runs) with a broadcast and an alltoall on the world, and
// reads the JSON report back.
func TestScenarioJSONAndOneRank(t *testing.T) {
	sc, err := Parse([]byte(`{"name": "one", "ranks": 1, "iterations": 2, "warmup": 0, "steps": [
		{"op": "broadcast", "group": "world", "size": "4K", "dtype": "int32"},
		{"compute": "200us"},
		{"op": "alltoall", "group": "world", "size": 1024, "overlap": true, "count": 2}]}`), Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep, err := Run(context.Background(), sc, Options{World: world.World{Backend: "shm", Timeout: 10 * time.Second}, JSON: true}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if back.Critical != "" || len(back.Domains) != 1 || back.Domains[0].Links || back.Domains[0].OpsPerStep != 3 ||
		back.Wrong != 0 || len(back.WrongBySteps) != 2 || back.StepMS != rep.StepMS {
		t.Errorf("got %s", out.String())
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "critical domain: none") {
		t.Errorf("text report:\n%s", text.String())
	}
}

// TestScenarioCorruptionCounted: corrupted messages (--inject corrupt) make
// wrong elements, which the report counts and names the steps of, while
// the harness's own messages, which no fault touches, still add up.
func TestScenarioCorruptionCounted(t *testing.T) {
	sc, err := Parse([]byte(`{"name": "corrupt", "ranks": 2, "iterations": 1, "warmup": 0, "steps": [
		{"name": "ar", "op": "allreduce", "group": "world", "size": "4K", "dtype": "int32"}]}`), Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := inject.Parse("corrupt=p:1")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep, err := Run(context.Background(), sc, Options{World: world.World{Backend: "shm", Timeout: 10 * time.Second},
		Faults: world.Faults{Inject: spec, InjectText: "corrupt=p:1", Seed: 1}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	// The timed iteration's corrupted messages, which no check sees, count
	// one each besides what the checked iteration found.
	if rep.Wrong <= 0 || rep.Injected <= 0 || rep.WrongBySteps[0].Wrong+rep.Injected != rep.Wrong ||
		!strings.Contains(out.String(), `# wrong elements: `+fmt.Sprint(rep.Wrong)+` (step 1 "ar": `) {
		t.Errorf("wrong %d, injected %d:\n%s", rep.Wrong, rep.Injected, out.String())
	}
}

// TestScenarioUncheckedCorruption: a message corrupted where the check
// cannot see it (the first measured op, in the warm-up) is still reported,
// one wrong element, and the report says that --inject put it there.
func TestScenarioUncheckedCorruption(t *testing.T) {
	sc, err := Parse([]byte(`{"name": "corrupt", "ranks": 2, "iterations": 2, "warmup": 1, "steps": [
		{"name": "ar", "op": "allreduce", "group": "world", "size": "4K", "dtype": "int32"}]}`), Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := inject.Parse("corrupt=op:1@rank=0")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep, err := Run(context.Background(), sc, Options{World: world.World{Backend: "shm", Timeout: 10 * time.Second},
		Faults: world.Faults{Inject: spec, InjectText: "corrupt=op:1@rank=0", Seed: 1}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Injected < 1 || rep.Wrong != rep.Injected+rep.WrongBySteps[0].Wrong ||
		!strings.Contains(out.String(), "corrupted by --inject where the check could not see them") {
		t.Errorf("wrong %d, injected %d:\n%s", rep.Wrong, rep.Injected, out.String())
	}
}
