package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ncclReport is the part of -J's report the tests read.
type ncclReport struct {
	Version int `json:"version"`
	Results []struct {
		Size       int64 `json:"size"`
		OutOfPlace *struct {
			Time  float64 `json:"time"`
			AlgBW float64 `json:"alg_bw"`
			BusBW float64 `json:"bus_bw"`
		} `json:"out_of_place"`
	} `json:"results"`
	Errors []string `json:"errors"`
}

func readNCCLReport(t *testing.T, path string) ncclReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep ncclReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("-J's report does not parse: %v\n%s", err, b)
	}
	return rep
}

// column returns the CSV's column name of every row.
func column(t *testing.T, rows [][]string, name string) []string {
	t.Helper()
	i := slices.Index(rows[0], name)
	if i < 0 {
		t.Fatalf("no column %s in %q", name, rows[0])
	}
	var out []string
	for _, r := range rows[1:] {
		out = append(out, r[i])
	}
	return out
}

// TestRunCyclesUntilInterrupted: -N 0 runs the sweep again and again
// until SIGINT, then exits 130 with every row measured in every output:
// the table (each row with its cycle), the CSV and JSON lines (their run
// column), the bench file, and -J's report, still a whole JSON object.
func TestRunCyclesUntilInterrupted(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	cmd := exec.Command(bin, "-p", "2", "-b", "1K", "-e", "8K", "-f", "2", "-n", "3", "-w", "1", "--link-bw", "1GB/s",
		"-N", "0", "--csv", path("r.csv"), "--json", path("r.jsonl"), "--bench", path("r.txt"), "-J", path("r.json"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer func() { _ = cmd.Process.Kill(); <-done }()
	var table strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			table.WriteString(line + "\n")
			// Once the fourth cycle has begun, three are whole.
			if f := strings.Fields(line); !signalled && !strings.HasPrefix(line, "#") && len(f) > 0 && f[0] == "4" {
				signalled = true
				_ = cmd.Process.Signal(syscall.SIGINT)
			}
		}
	}()
	go func() { <-read; _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("-N 0 not ended 2 minutes after starting; stdout so far:\n%s", table.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitSignal {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitSignal, stderr.String())
	}
	rows := tableRowLines(table.String())
	var cycles []string
	for _, r := range rows {
		cycles = append(cycles, strings.Fields(r)[0])
	}
	const perCycle = 4 // 1K, 2K, 4K, 8K
	if len(rows) < 3*perCycle+1 {
		t.Fatalf("%d rows, want 3 cycles of %d and more:\n%s", len(rows), perCycle, table.String())
	}
	for i, c := range cycles[:3*perCycle] {
		if want := strconv.Itoa(i/perCycle + 1); c != want {
			t.Errorf("row %d: cycle %s, want %s", i, c, want)
		}
	}
	csvRows := readCSVFile(t, path("r.csv"))
	if got := column(t, csvRows, "run"); !slices.Equal(got, cycles) {
		t.Errorf("the CSV's run column %q, the table's cycles %q", got, cycles)
	}
	jsonl, err := os.ReadFile(path("r.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(jsonl), "\n"); n != len(rows) {
		t.Errorf("%d JSON lines, %d rows in the table", n, len(rows))
	}
	bench, err := os.ReadFile(path("r.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(bench), "\nBenchmark"); n != len(rows) {
		t.Errorf("%d bench lines, %d rows in the table", n, len(rows))
	}
	if !strings.Contains(string(bench), "\n# cycle 4\n") {
		t.Errorf("the bench file does not mark the 4th cycle:\n%s", bench)
	}
	rep := readNCCLReport(t, path("r.json"))
	if len(rep.Results) != len(rows) || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "interrupt") {
		t.Errorf("-J holds %d results (the table %d), errors %q", len(rep.Results), len(rows), rep.Errors)
	}
}

// TestRunCyclesThree: -N 3 prints three cycles of the sweep, each row with
// its cycle, and -J's report holds the same figures as the CSV.
func TestRunCyclesThree(t *testing.T) {
	dir := t.TempDir()
	csvPath, jPath := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"-p", "2", "-b", "1K", "-e", "4K", "-f", "2", "-n", "3", "-w", "1", "--link-bw", "1GB/s",
		"-N", "3", "--csv", csvPath, "-J", jPath}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	rows := tableRowLines(stdout.String())
	var cycles []string
	for _, r := range rows {
		cycles = append(cycles, strings.Fields(r)[0])
	}
	if want := []string{"1", "1", "1", "2", "2", "2", "3", "3", "3"}; !slices.Equal(cycles, want) {
		t.Errorf("cycles %q, want %q:\n%s", cycles, want, stdout.String())
	}
	if !strings.Contains(stdout.String(), "# cycles 3: ") || strings.Contains(stdout.String(), "median") {
		t.Errorf("the header does not say each of 3 cycles is shown:\n%s", stdout.String())
	}
	csvRows := readCSVFile(t, csvPath)
	rep := readNCCLReport(t, jPath)
	if rep.Version != 3 || len(rep.Results) != len(csvRows)-1 {
		t.Fatalf("-J: version %d, %d results; the CSV has %d rows", rep.Version, len(rep.Results), len(csvRows)-1)
	}
	for name, get := range map[string]func(i int) float64{
		"size_bytes": func(i int) float64 { return float64(rep.Results[i].Size) },
		"time_us":    func(i int) float64 { return rep.Results[i].OutOfPlace.Time },
		"algbw_GBps": func(i int) float64 { return rep.Results[i].OutOfPlace.AlgBW },
		"busbw_GBps": func(i int) float64 { return rep.Results[i].OutOfPlace.BusBW },
	} {
		for i, want := range column(t, csvRows, name) {
			if got := strconv.FormatFloat(get(i), 'f', -1, 64); got != want {
				t.Errorf("result %d: %s %s in -J, %s in the CSV", i, name, got, want)
			}
		}
	}
}

// TestReportTimestamps: -S 1 ends every row of the table with the time it
// was measured, as nccl-tests prints it, and fills the CSV's timestamp.
func TestReportTimestamps(t *testing.T) {
	csvPath := filepath.Join(t.TempDir(), "r.csv")
	var stdout, stderr bytes.Buffer
	before := time.Now().Truncate(time.Second)
	code := run([]string{"-p", "2", "-b", "1K", "-e", "4K", "-f", "2", "-n", "3", "-w", "1", "--link-bw", "1GB/s",
		"-S", "1", "--csv", csvPath}, &stdout, &stderr)
	after := time.Now()
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	rows := tableRowLines(stdout.String())
	stamps := column(t, readCSVFile(t, csvPath), "timestamp")
	if len(rows) != 3 || len(stamps) != 3 {
		t.Fatalf("%d rows, %d CSV timestamps, want 3", len(rows), len(stamps))
	}
	for i, r := range rows {
		ts, err := time.ParseInLocation("2006-01-02 15:04:05", r[len(r)-19:], time.Local)
		if err != nil || ts.Before(before) || ts.After(after) {
			t.Errorf("row %q: timestamp %v (%v), want one between %v and %v", r, ts, err, before, after)
		}
		cts, err := time.Parse("2006-01-02T15:04:05.000Z07:00", stamps[i])
		if err != nil || !cts.Truncate(time.Second).Equal(ts) {
			t.Errorf("CSV timestamp %q (%v), the table's %v", stamps[i], err, ts)
		}
	}
}

// TestReportMemory: -M 1 prints, before the rows, the parts of the memory
// estimate that --dry-run prints for the same flags.
func TestReportMemory(t *testing.T) {
	args := []string{"-p", "2", "-b", "1K", "-e", "64K", "-f", "4", "-n", "3", "-w", "1", "--link-bw", "1GB/s"}
	var dry, stdout, stderr bytes.Buffer
	if code := run(append(slices.Clone(args), "--dry-run"), &dry, &stderr); code != exitOK {
		t.Fatalf("--dry-run: exit %d: %s", code, stderr.String())
	}
	if code := run(append(slices.Clone(args), "-M", "1"), &stdout, &stderr); code != exitOK {
		t.Fatalf("-M 1: exit %d: %s", code, stderr.String())
	}
	// --dry-run: "# memory: about X per rank, T for the 2 ranks on this machine: a + b + c".
	_, dryParts, ok := strings.Cut(lineWith(dry.String(), "# memory: about"), "on this machine: ")
	_, total, _ := strings.Cut(lineWith(dry.String(), "# memory: about"), " per rank, ")
	total, _, _ = strings.Cut(total, " for the")
	memLine := lineWith(stdout.String(), "# memory (estimated, as --dry-run): ")
	want := "# memory (estimated, as --dry-run): " + strings.ReplaceAll(dryParts, " + ", " | ") + " | total " + total + ", for the 2 ranks on this machine"
	if !ok || memLine != want {
		t.Errorf("-M prints\n%q\nwant the estimate --dry-run prints\n%q", memLine, want)
	}
	if first := strings.Index(stdout.String(), "\n        1024"); first < strings.Index(stdout.String(), memLine) {
		t.Errorf("the memory line is not before the rows:\n%s", stdout.String())
	}
}

// lineWith returns the first line of s that starts with prefix.
func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestGPUFlagsRefused: every nccl-tests flag that needs a GPU is refused
// by its short and long names, as nccl-tests spells them and with dashes,
// in one line that names it and says why.
func TestGPUFlagsRefused(t *testing.T) {
	for _, g := range gpuFlags {
		for _, args := range [][]string{{"-" + g.short, "1"}, {"-" + g.short + "0"}, {"--" + g.long, "2"},
			{"--" + strings.ReplaceAll(g.long, "_", "-") + "=1"}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				_, _, err := parseFlags(append([]string{"-b", "1K"}, args...), io.Discard)
				if err == nil {
					t.Fatal("accepted")
				}
				kind := "nccl-tests' flag for GPUs"
				if !g.gpu {
					kind = "nccl-tests' flag" // -K
				}
				want := "-" + g.short + "/--" + g.long + ": " + kind + " has no meaning here: " + g.why
				if err.Error() != want {
					t.Errorf("got %q, want %q", err, want)
				}
			})
		}
	}
}

// TestRunFlagsHostile: -N, -S and -M at their limits and past them.
func TestRunFlagsHostile(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" accepted
	}{
		{[]string{"-N", "0"}, ""},
		{[]string{"-N", "1000000"}, ""},
		{[]string{"-N", "1000001"}, "-N/--run-cycles 1000001: at most 1000000, or 0 for until interrupted"},
		{[]string{"-N", "-1"}, "-N/--run-cycles -1: want 0 (until interrupted) or a number of cycles"},
		{[]string{"-N", "NaN"}, `"NaN" is not a whole number`},
		{[]string{"-N", "99999999999999999999"}, `"99999999999999999999": want a number from -2147483648 to 2147483648`},
		{[]string{"--run_cycles", "2", "--runs", "2"}, "-N/--run-cycles and --runs: give one of them, not both (-N prints every cycle, --runs each row's median)"},
		{[]string{"-S", "0", "-M", "0"}, ""},
		{[]string{"-S", "2"}, "-S/--report-timestamps 2: want 1 (on) or 0 (off)"},
		{[]string{"--report_timestamps", "-1"}, "-S/--report-timestamps -1: want 1 (on) or 0 (off)"},
		{[]string{"-M", "7"}, "-M/--memory 7: want 1 (on) or 0 (off)"},
		{[]string{"-J", "-", "--bench", "-"}, "-J -: only one output can write to stdout (-), and --csv, --json or --bench does"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			p, _, err := parseFlags(c.args, io.Discard)
			if err == nil {
				err = p.Validate()
			}
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(flagText(err), c.want)):
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestPerIterTiming: nccl-tests' -I 1 asks for per-iteration figures,
// which are --stats here; 0 leaves them off, anything else is refused.
func TestPerIterTiming(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		stats bool
		err   string
	}{
		{[]string{"-I", "1"}, true, ""},
		{[]string{"--per_iter_timing=1"}, true, ""},
		{[]string{"-I0"}, false, ""},
		{[]string{"-I", "0", "--stats"}, true, ""},
		{[]string{"-I", "2"}, false, "-I/--per-iter-timing 2: want 1 (on) or 0 (off)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			p, _, err := parseFlags(append([]string{"-b", "1K"}, tc.args...), io.Discard)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Stats != tc.stats {
				t.Errorf("stats %v, want %v", p.Stats, tc.stats)
			}
		})
	}
}
