package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// built is the program the tests run, built once for the package: a
// link takes seconds, tens of them on a loaded host, and some sixty tests
// run the program.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// TestMain removes the program the tests built once they have run.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildBinary returns the command at a path of t's own: a hard link to
// (or a copy of) the program built on the first call of the test run.
// The path is the test's so that a test finding the processes it left
// behind by their executable's path sees no other test's.
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "hccl-test-bin-"); built.err != nil {
			return
		}
		bin := filepath.Join(built.dir, "hccl-test")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.path = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	bin := filepath.Join(t.TempDir(), "hccl-test")
	if os.Link(built.path, bin) == nil {
		return bin
	}
	data, err := os.ReadFile(built.path)
	if err == nil {
		err = os.WriteFile(bin, data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runBinaryEnv(t, bin, nil, args...)
}

// tableRows returns rowRE's submatches for every row of a table on
// stdout (the lines that are not comments), failing the test on a row
// that does not parse.
func tableRows(t *testing.T, stdout string) [][]string {
	t.Helper()
	var rows [][]string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("row does not parse: %q", line)
		}
		rows = append(rows, m)
	}
	return rows
}

// A util above 100% carries results.FasterMark after it, outside its group;
// a util against a link probe whose repetitions did not agree, a "?".
// The last two groups, imbal and hot, are there when a variable-size
// collective is among the ops.
var rowRE = regexp.MustCompile(`^\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(-?\d+)\s+(\S+)\s+([\d.e+]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+|-)[!?]?\s+(\d+|N/A)\s+(\d+)\s+([\d.]+|-)(?:\s+([\d.]+|-)\s+(\d+|-))?$`)

// TestTheCommand runs the command from the README with a smaller maxbytes
// and checks that every size got a checked, correct row.
func TestTheCommand(t *testing.T) {
	bin := buildBinary(t)
	stdout, stderr, code := runBinary(t, bin, "--op", "allreduce", "--datatype", "fp16",
		"--minbytes", "1024", "--maxbytes", "1048576", "--stepfactor", "2", "-n", "3", "-w", "1")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	if stderr != "" {
		t.Errorf("unexpected stderr: %q", stderr)
	}
	var sizes []string
	for _, m := range tableRows(t, stdout) {
		if m[3] != "fp16" || m[4] != "sum" || m[5] != "-1" || m[11] != "0" {
			t.Errorf("unexpected row %q", m[0])
		}
		sizes = append(sizes, m[1])
	}
	want := strings.Fields("1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576")
	if strings.Join(sizes, " ") != strings.Join(want, " ") {
		t.Errorf("sizes %v, want %v", sizes, want)
	}
	for _, s := range []string{"# backend shm  ranks 8", "# link bandwidth", "# wrong elements: 0 OK", "# avg bus bandwidth", "time   algbw   busbw   util  #wrong"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q", s)
		}
	}
}

// TestBadInput checks that every bad value is refused before anything runs,
// with one line on stderr naming the flag, and exit code 2.
func TestBadInput(t *testing.T) {
	bin := buildBinary(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--op", "allreduse"}, "allreduse"},
		{[]string{"--op", "sum,allreduce"}, "--redop"}, // --op sum alone is hccl_test's --op: the reduction
		{[]string{"--op", "max", "--redop", "sum"}, "--redop"},
		{[]string{"-d", "fp17"}, "fp17"},
		{[]string{"-o", "mean"}, "mean"},
		{[]string{"-b", "2M", "-e", "1M"}, "--minbytes"},
		{[]string{"-f", "1"}, "--stepfactor"},
		{[]string{"-f", "0.5"}, "--stepfactor"},
		{[]string{"-p", "0"}, "--ranks"},
		{[]string{"-b", "12Q"}, "12Q"},
		{[]string{"-e", "99999999T"}, "99999999T"},
		{[]string{"-e", "20T"}, "memory"},
		{[]string{"--backend", "nccl"}, "nccl"},
		{[]string{"--algo", "pairwise"}, "pairwise"},
		{[]string{"--placement", "sideways"}, "sideways"},
		{[]string{"--link-bw", "fast"}, "fast"},
		{[]string{"-T", "soon"}, "soon"},
		{[]string{"-c", "-2"}, "--check"}, // -c 2 is two checked runs (-c N, as nccl-tests)
		{[]string{"-r", "9"}, "--root"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
		{[]string{"extra"}, "extra"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runBinary(t, bin, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if stdout != "" {
				t.Errorf("stdout not empty: %q", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tc.want)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	bin := buildBinary(t)
	stdout, _, code := runBinary(t, bin, "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, s := range []string{"--minbytes", "--warmup-iters", "--link-bw", "hccs", "roce", "nvlink", "pcie4", "Examples:", "(default"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("--help lacks %q", s)
		}
	}
	stdout, _, code = runBinary(t, bin, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "hccl-test ") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}

// TestUnderscoreFlags checks that nccl-tests' and hccl_test's spellings work.
func TestUnderscoreFlags(t *testing.T) {
	bin := buildBinary(t)
	stdout, stderr, code := runBinary(t, bin, "--warmup_iters", "0", "--iters", "1", "-b", "1K", "-e", "1K", "-p", "2", "--link_bw", "10GB/s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "warmup 0") {
		t.Errorf("--warmup_iters not applied:\n%s", stdout)
	}
}
