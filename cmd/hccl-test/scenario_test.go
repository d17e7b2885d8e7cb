package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tcpScenario is a small step on 4 ranks, tp=2 dp=2: forward compute, a tp
// allreduce, backward compute with the dp allreduce overlapping it, and a
// tp allgather twice.
const tcpScenario = `{
  "name": "tcp test step", "ranks": 4, "groups": "tp=2,dp=2", "iterations": 4, "warmup": 1, "slowdown": "100%",
  "steps": [
    {"name": "forward", "compute": "1ms"},
    {"name": "tp allreduce", "group": "tp", "op": "allreduce", "dtype": "bf16", "size": "256K"},
    {"name": "backward", "compute": "1ms"},
    {"name": "dp allreduce", "group": "dp", "op": "allreduce", "dtype": "fp32", "size": "256K", "overlap": true},
    {"name": "tp allgather", "group": "tp", "op": "allgather", "dtype": "fp16", "size": "64K", "count": 2}
  ]
}`

// writeScenario writes a scenario file into a fresh directory.
func writeScenario(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "step.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestScenarioTCP runs the scenario subcommand on 4 rank processes, with
// the dp links planted slow (a bandwidth limit on both directions of every
// dp pair: with tp fastest, dp groups are {0,2} and {1,3}), and checks
// that the report comes out whole on tcp, where its 4 iterations, 2
// rounds, are too few for a verdict and it says so (the shm test and the
// unit tests check the verdict itself), every result is right and no rank
// process is left behind.
func TestScenarioTCP(t *testing.T) {
	bin := buildBinary(t)
	file := writeScenario(t, tcpScenario)
	slow := "bw=25MB/s@link=0-2;bw=25MB/s@link=2-0;bw=25MB/s@link=1-3;bw=25MB/s@link=3-1"
	p := start(t, "hccl-test scenario", cleanEnv(), bin, "scenario", "--backend", "tcp", "-p", "4",
		"--inject", slow, "-T", "30s", file)
	code := p.wait(t, 90*time.Second)
	noLeftovers(t, bin)
	stdout, stderr := p.out.String(), p.errOut.String()
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if stderr != "" {
		t.Errorf("unexpected stderr:\n%s", stderr)
	}
	for _, want := range []string{`# hccl-test scenario "tcp test step": 4 ranks on tcp`, "# critical domain: ", "# wrong elements: 0 OK"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stdout, "but 2 rounds give intervals of only 50% confidence") {
		t.Errorf("the report does not say its 2 rounds are too few for a verdict:\n%s", stdout)
	}
	if n := strings.Count(stdout, "# hccl-test scenario"); n != 1 {
		t.Errorf("%d reports, want 1 (rank 0's):\n%s", n, stdout)
	}
}

// TestScenarioBadInput: a bad file or flag exits 2 with one line on stderr,
// before any rank starts.
func TestScenarioBadInput(t *testing.T) {
	good := writeScenario(t, tcpScenario)
	dir := filepath.Dir(good)
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(tcpScenario, `"dtype": "bf16"`, `"dtype": "bf17"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "hccl-test scenario: want one scenario FILE, got 0 arguments (see hccl-test scenario --help)"},
		{"two files", []string{good, good}, "want one scenario FILE, got 2 arguments"},
		{"unknown flag", []string{"--no-such-flag", good}, "unknown flag: --no-such-flag (see hccl-test scenario --help)"},
		{"missing file", []string{filepath.Join(dir, "missing.json")}, "reading the scenario: open " + filepath.Join(dir, "missing.json") + ": no such file or directory"},
		{"bad file", []string{bad}, bad + `: step 2 "tp allreduce": dtype: unknown data type "bf17"`},
		{"ranks", []string{"-p", "3", good}, good + `: groups "tp=2,dp=2": the sizes multiply to 4, not the 3 ranks of the world (-p 3)`},
		{"no ranks", []string{"-p", "0", good}, "--ranks 0: need at least 1 rank"},
		{"topology off sim", []string{"--topology", "servers=2", good}, "--topology: only --backend sim takes it in a scenario, to place the simulated ranks (elsewhere the file's groups are the domains)"},
		{"link off sim", []string{"--link-bw", "hccs", good}, "--link-bw: only --backend sim takes it in a scenario, for the simulated links"},
		{"sim alpha off sim", []string{"--sim-alpha", "2us", good}, "--sim-alpha: only --backend sim simulates links"},
		{"sim topology", []string{"--backend", "sim", "--topology", "servers=3", good}, `--topology "servers=3": servers x per-server must be the world's 4 ranks (--ranks)`},
		{"sim inter", []string{"--backend", "sim", "--link-bw", "intra=hccs,inter=roce", good}, "--link-bw inter=: a link between servers needs --topology with more than one server"},
		{"bind off tcp", []string{"--bind", "lo", good}, "--bind: only --backend proc or tcp has ranks that listen on a network address; it means nothing on --backend shm"},
		{"master off tcp", []string{"--backend", "sim", "--master", "127.0.0.1:29500", good}, "--master: only --backend proc or tcp has ranks that meet at a rendezvous address; it means nothing on --backend sim"},
		{"no data off sim", []string{"--sim-data=false", good}, "--sim-data=false: only --backend sim can run without payload"},
		{"corrupt without data", []string{"--backend", "sim", "--sim-data=false", "--inject", "corrupt=p:0.1", good}, `--inject "corrupt=p:0.1": corrupt changes the bytes of messages, and with --sim-data=false they have none`},
		{"iters", []string{"--iters", "0", good}, "--iters 0: need at least 1 timed iteration"},
		{"slowdown", []string{"--slowdown", "fast", good}, good + `: --slowdown: "fast": want a percentage such as 50%`},
		{"timeout", []string{"-T", "-1", good}, `"-1" seconds: must not be negative`},
		{"backend", []string{"--backend", "nccl", good}, `--backend: unknown backend "nccl"`},
		{"inject", []string{"--inject", "bw=fast", good}, `--inject "bw=fast": rate "fast": want a number with GB/s, MB/s, KB/s, Gbit/s or Mbit/s`},
		{"inject rank", []string{"--inject", "delay=1ms@rank=7", good}, "--inject: rank out of range for 4 ranks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"scenario"}, tc.args...), &stdout, &stderr)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitUsage, stderr.String())
			}
			line := stderr.String()
			if strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "hccl-test scenario: ") || !strings.Contains(line, tc.want) {
				t.Errorf("stderr %q: want one line with %q", line, tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout not empty: %q", stdout.String())
			}
		})
	}
}

// TestScenarioHelp: --help describes the subcommand and its flags.
func TestScenarioHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"scenario", "--help"}, &stdout, &stderr); code != exitOK || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	for _, want := range []string{"Usage: hccl-test scenario [flags] FILE", "--slowdown", "--inject", "--json", "critical domain"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestScenarioWrongExit: wrong results (every message corrupted) exit 3
// after the report.
func TestScenarioWrongExit(t *testing.T) {
	file := writeScenario(t, `{"name": "corrupt", "ranks": 2, "iterations": 1, "warmup": 0, "steps": [
		{"op": "allgather", "group": "world", "size": "4K", "dtype": "fp16"}]}`)
	var stdout, stderr bytes.Buffer
	code := run([]string{"scenario", "--inject", "corrupt=p:1", file}, &stdout, &stderr)
	if code != exitWrong {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitWrong, stderr.String())
	}
	if !strings.Contains(stdout.String(), "# wrong elements: ") || !strings.Contains(stderr.String(), "wrong elements: the collective results are not correct") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}
