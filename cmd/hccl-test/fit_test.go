package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fitModel fits the test logs of nccl-tests (two servers of four ranks)
// into a model file in dir and returns its path.
func fitModel(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "model.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"fit", "-o", path, logPath(t, "nccl-tests-2.19.log")}, &stdout, &stderr); code != exitOK {
		t.Fatalf("fit: exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"intra  alpha", "inter  alpha", "from ", "residual%", "nccl-tests-2.19.log"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("fit's report has no %q:\n%s", want, stdout.String())
		}
	}
	return path
}

// TestFitPredictCommands fits a log, predicts a larger world from it as a
// table, as CSV and as both exports.
func TestFitPredictCommands(t *testing.T) {
	dir := t.TempDir()
	model := fitModel(t, dir)
	csvPath, simai, tuner := filepath.Join(dir, "p.csv"), filepath.Join(dir, "busbw.yaml"), filepath.Join(dir, "tuner.conf")
	for _, args := range [][]string{
		{"--csv", csvPath},
		{"--export", "simai", "-o", simai},
		{"--export", "nccl-tuner", "-o", tuner},
		{"--algo", "ring"},
	} {
		var stdout, stderr bytes.Buffer
		base := []string{"predict", "--model", model, "--topology", "servers=16,per-server=4", "-b", "1M", "-e", "256M", "-f", "4"}
		if code := run(append(base, args...), &stdout, &stderr); code != exitOK {
			t.Fatalf("predict %v: exit %d: %s", args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "predicted, not measured") {
			t.Errorf("predict %v: no table header:\n%s", args, stdout.String())
		}
	}
	got, _ := os.ReadFile(csvPath)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 1+5 || !strings.HasPrefix(lines[0], "op,ranks,servers,per_server,size_bytes,algo,time_us,algbw_GBps,busbw_GBps,time_low_us") ||
		!strings.HasPrefix(lines[1], "allreduce,64,16,4,1048576,") {
		t.Errorf("CSV:\n%s", got)
	}
	y, _ := os.ReadFile(simai)
	for _, want := range []string{"TP:\nallreduce,: ", "DP:\n", "EP:\n", "PP:\nbusbw: "} {
		if !strings.Contains(string(y), want) {
			t.Errorf("simai export has no %q:\n%s", want, y)
		}
	}
	c, _ := os.ReadFile(tuner)
	if !strings.Contains(string(c), "\nallreduce,0,") || !strings.Contains(string(c), ",4294967295,") || !strings.Contains(string(c), ",simple,-1,16,64\n") {
		t.Errorf("nccl-tuner export:\n%s", c)
	}
}

// TestFitPredictRefusals checks that every bad input is refused in one
// line on stderr with exit 2, and nothing on stdout.
func TestFitPredictRefusals(t *testing.T) {
	dir := t.TempDir()
	model := fitModel(t, dir)
	log := logPath(t, "nccl-tests-2.19.log")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	orig, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	mixed := write("mixed.log", strings.Replace(string(orig), "device  1 [0000:19:00] Example Accelerator X1", "device  1 [0000:19:00] Other Accelerator Y2", 1))
	ours := write("ours.csv", "schema_version,backend,ranks,op,algo,size_bytes,time_us,topology\n1,shm,2,allreduce,ring,1048576,500,\n")
	var m map[string]any
	mj, _ := os.ReadFile(model)
	if err := json.Unmarshal(mj, &m); err != nil {
		t.Fatal(err)
	}
	edit := func(name string, change func(map[string]any)) string {
		var c map[string]any
		json.Unmarshal(mj, &c)
		change(c)
		b, _ := json.Marshal(c)
		return write(name, string(b))
	}
	v2 := edit("v2.json", func(c map[string]any) { c["version"] = 2 })
	negBW := edit("neg.json", func(c map[string]any) { c["intra"].(map[string]any)["bw_GBps"] = -3 })
	unknown := edit("unknown.json", func(c map[string]any) { c["colour"] = "blue" })
	noInter := edit("nointer.json", func(c map[string]any) { delete(c, "inter") })
	badOp := edit("badop.json", func(c map[string]any) { c["ops"].([]any)[0].(map[string]any)["op"] = "allsmash" })
	nanModel := write("nan.json", strings.Replace(string(mj), `"version": 1,`, `"version": 1, "reduce_GBps": NaN,`, 1))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	pr := func(extra ...string) []string {
		return append([]string{"predict", "--model", model, "--topology", "servers=4,per-server=4"}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"two devices in a log", []string{"fit", "-o", filepath.Join(dir, "x.json"), mixed}, "two clusters mixed: ranks on Example Accelerator X1 and on Other Accelerator Y2"},
		{"two tools", []string{"fit", "-o", filepath.Join(dir, "x.json"), log, ours}, "two clusters mixed"},
		{"topology against rank lines", []string{"fit", "-o", filepath.Join(dir, "x.json"), "--topology", "servers=1,per-server=8", log}, "contradicts the rank lines, which put 4 ranks on each of 2 hosts"},
		{"topology of another file", []string{"fit", "-o", filepath.Join(dir, "x.json"), "--topology", "a.log=servers=2", log}, "a.log is none of the logs to fit"},
		{"no rank lines", []string{"fit", "-o", filepath.Join(dir, "x.json"), logPath(t, "hccl_test.log")}, "give --topology"},
		// Hostile topologies of a log with 8 ranks: the limit named is its ranks.
		{"topology servers max int64", []string{"fit", "-o", filepath.Join(dir, "x.json"), "--topology", "servers=9223372036854775807", log}, `"servers=9223372036854775807": want 1 to 8, the world's ranks`},
		{"topology servers past a count", []string{"fit", "-o", filepath.Join(dir, "x.json"), "--topology", "servers=99999999999999999999", log}, `"servers=99999999999999999999": want 1 to 8, the world's ranks`},
		{"topology servers 0", []string{"fit", "-o", filepath.Join(dir, "x.json"), "--topology", "servers=0", log}, `"servers=0" is not servers=S or per-server=P with a positive number`},
		{"topology servers negative", []string{"fit", "-o", filepath.Join(dir, "x.json"), "--topology", "servers=-2", log}, `"servers=-2" is not servers=S or per-server=P with a positive number`},
		{"topology servers NaN", []string{"fit", "-o", filepath.Join(dir, "x.json"), "--topology", "servers=NaN", log}, `"servers=NaN" is not servers=S or per-server=P with a positive number`},
		{"topology servers empty", []string{"fit", "-o", filepath.Join(dir, "x.json"), "--topology", "servers=", log}, `"servers=" is not servers=S or per-server=P with a positive number`},
		{"log a directory", []string{"fit", "-o", filepath.Join(dir, "x.json"), dir}, "is a directory"},
		{"log a fifo", []string{"fit", "-o", filepath.Join(dir, "x.json"), fifo}, "is a named pipe"},
		{"log missing", []string{"fit", "-o", filepath.Join(dir, "x.json"), filepath.Join(dir, "none.log")}, "no such file"},
		{"no -o", []string{"fit", log}, "want -o MODEL.json"},
		{"output is the log", []string{"fit", "-o", log, log}, "the model would replace it"},
		{"min-size NaN", []string{"fit", "--min-size", "NaN", "-o", filepath.Join(dir, "x.json"), log}, "--min-size"},
		{"version 2", []string{"predict", "--model", v2, "--topology", "servers=4,per-server=4"}, "model version 2: this build reads version 1 only"},
		{"negative bandwidth", []string{"predict", "--model", negBW, "--topology", "servers=4,per-server=4"}, "intra.bw_GBps -3"},
		{"unknown field", []string{"predict", "--model", unknown, "--topology", "servers=4,per-server=4"}, `unknown field "colour"`},
		{"inter removed", []string{"predict", "--model", noInter, "--topology", "servers=4,per-server=4"}, "inter is missing"},
		{"unknown op", []string{"predict", "--model", badOp, "--topology", "servers=4,per-server=4"}, `op "allsmash"`},
		{"NaN in the model", []string{"predict", "--model", nanModel, "--topology", "servers=4,per-server=4"}, "not a model file (JSON)"},
		{"model a directory", []string{"predict", "--model", dir, "--topology", "servers=4,per-server=4"}, "is a directory"},
		{"model a fifo", []string{"predict", "--model", fifo, "--topology", "servers=4,per-server=4"}, "is a named pipe"},
		{"model a log", []string{"predict", "--model", log, "--topology", "servers=4,per-server=4"}, "not a model file (JSON)"},
		{"too many ranks", []string{"predict", "--model", model, "--topology", "servers=1024,per-server=128"}, "beyond the limit of 65536"},
		{"topology NaN", []string{"predict", "--model", model, "--topology", "servers=NaN,per-server=8"}, "servers=NaN"},
		{"one key", []string{"predict", "--model", model, "--topology", "servers=4"}, "give both servers=S and per-server=G"},
		{"size beyond the limit", pr("-e", "2000T"), "-e: "},
		{"size NaN", pr("-b", "NaN"), "-b: "},
		{"factor 1", pr("-b", "1K", "-e", "1M", "-f", "1"), "-f 1: the step factor must be 2 or more"},
		{"op unknown", pr("--op", "allsmash"), `unknown collective "allsmash"`},
		{"op not fitted", pr("--op", "alltoall"), "the model has no fit of alltoall"},
		{"algo of another op", pr("--algo", "pairwise"), "--algo pairwise does not serve allreduce"},
		{"export unknown", pr("--export", "astra"), `--export "astra": want simai or nccl-tuner`},
		{"export without -o", pr("--export", "simai"), "want -o FILE"},
		{"-o without export", pr("-o", filepath.Join(dir, "y")), "only --export writes to -o"},
		{"output is the model", pr("--csv", model), "would replace the model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tc.want) || stdout.Len() > 0 {
				t.Errorf("exit %d, want 2; stderr %q, want one line with %q; stdout %q", code, stderr.String(), tc.want, stdout.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.json")); err == nil {
		t.Error("a refused fit left a model file behind")
	}
}

// TestPredictMatchesSimulator runs the simulator command that predict
// prints for a world and checks that the simulated time of the
// algorithm predict names is the predicted one (hier's cost model and
// simulation agree exactly; docs/sim.md).
func TestPredictMatchesSimulator(t *testing.T) {
	model := filepath.Join("..", "..", "predict", "testdata", "model.json")
	var pred, table, stderr bytes.Buffer
	args := []string{"predict", "--model", model, "--topology", "servers=4,per-server=4", "-b", "64M", "-e", "64M"}
	if code := run(append(args, "--csv", "-"), &pred, &stderr); code != exitOK {
		t.Fatalf("predict: exit %d: %s", code, stderr.String())
	}
	if code := run(args, &table, &stderr); code != exitOK {
		t.Fatalf("predict: exit %d: %s", code, stderr.String())
	}
	_, simLine, ok := strings.Cut(table.String(), "(without the per-collective scales): hccl-test ")
	if !ok {
		t.Fatalf("no simulator command in:\n%s", table.String())
	}
	simArgs := strings.Fields(strings.SplitN(simLine, "\n", 2)[0])
	p := csvRow(t, pred.String())
	var sim bytes.Buffer
	if code := run(append(simArgs, "-b", "64M", "-e", "64M", "-n", "2", "-w", "1", "--algo", p["algo"], "--csv", "-"), &sim, &stderr); code != exitOK {
		t.Fatalf("%v: exit %d: %s", simArgs, code, stderr.String())
	}
	s := csvRow(t, sim.String())
	if s["algo"] != p["algo"] || !near(t, s["time_us"], p["time_us"], 0.01) {
		t.Errorf("simulated %s %s us, predicted %s %s us", s["algo"], s["time_us"], p["algo"], p["time_us"])
	}
}

// csvRow returns the first row of CSV text by column name.
func csvRow(t *testing.T, text string) map[string]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("CSV %q: %v", text, err)
	}
	m := map[string]string{}
	for i, name := range rows[0] {
		m[name] = rows[1][i]
	}
	return m
}

// near reports whether the numbers a and b are within frac of b.
func near(t *testing.T, a, b string, frac float64) bool {
	t.Helper()
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("%q, %q: not numbers", a, b)
	}
	return math.Abs(x-y) <= frac*math.Abs(y)
}
