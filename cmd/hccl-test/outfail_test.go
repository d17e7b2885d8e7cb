package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneFailedOutputKeepsTheOthers: fit, predict, convert and isolate
// write every output though one fails (a full device): the others hold
// every row, the report or table still reaches stdout, and one line names
// the output that failed, with exit 1. Each case runs twice, the failing
// output in place of a working one, and compares the working outputs with
// the run where all work.
func TestOneFailedOutputKeepsTheOthers(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	oneLog := "../../results/testdata/logs/nccl-tests-2.19.log"
	one, err := os.ReadFile(oneLog)
	must(t, err)
	// Thousands of rows (for convert; fit takes one log, its cost grows
	// with the rows): an output's failure is seen while the others still
	// have most of theirs to write.
	log := filepath.Join(dir, "many.log")
	must(t, os.WriteFile(log, []byte(strings.Repeat(string(one), 300)), 0o644))
	cluster := "../../isolate/testdata/cluster6"
	model := "../../predict/testdata/model.json"
	predict := []string{"predict", "--model", model, "--topology", "servers=4,per-server=8", "-b", "1", "-e", "1024T"}
	tests := []struct {
		name    string
		args    func(fail, ok string) []string // fail: the output that fails; ok: one that works
		stdout  bool                           // stdout carries a report or a table that must be whole
		failure string                         // the one line names it
	}{
		{"convert csv fails, json kept", func(f, o string) []string { return []string{"convert", "--csv", f, "--json", o, log} }, false, "--csv "},
		{"convert json fails, csv kept", func(f, o string) []string { return []string{"convert", "--json", f, "--csv", o, log} }, false, "--json "},
		{"convert bench fails, csv on stdout kept", func(f, o string) []string { return []string{"convert", "--bench", f, "--csv", "-", log} }, true, "--bench "},
		{"predict csv fails, export and table kept", func(f, o string) []string {
			return append(predict, "--csv", f, "--export", "nccl-tuner", "-o", o)
		}, true, "--csv "},
		{"predict export fails, csv and table kept", func(f, o string) []string {
			return append(predict, "--csv", o, "--export", "nccl-tuner", "-o", f)
		}, true, "-o "},
		{"fit model fails, report kept", func(f, o string) []string { return []string{"fit", "-o", f, oneLog} }, true, "-o "},
		{"isolate csv fails, report kept", func(f, o string) []string { return []string{"isolate", "--csv", f, cluster} }, true, "--csv "},
		{"isolate csv fails, image kept", func(f, o string) []string { return []string{"isolate", "--csv", f, "-o", o, cluster} }, true, "--csv "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			okPath := filepath.Join(d, "ok.svg") // isolate's image: an SVG, text
			wantOut, _, code := runBinary(t, bin, tc.args(filepath.Join(d, "also-ok"), okPath)...)
			if code != 0 && code != exitNamed {
				t.Fatalf("the run where every output works: exit %d", code)
			}
			want, err := os.ReadFile(okPath)
			if os.IsNotExist(err) {
				want, err = nil, nil
			}
			must(t, err)
			if err := os.Remove(okPath); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			gotOut, stderr, code := runBinary(t, bin, tc.args("/dev/full", okPath)...)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if code != exitFailed || len(lines) != 1 || !strings.Contains(lines[0], tc.failure) {
				t.Errorf("exit %d, stderr %q: want exit 1 and one line naming %s", code, stderr, tc.failure)
			}
			got, err := os.ReadFile(okPath)
			if os.IsNotExist(err) {
				got, err = nil, nil
			}
			must(t, err)
			if string(got) != string(want) {
				t.Errorf("the output that works holds %d bytes, %d when none failed", len(got), len(want))
			}
			if tc.stdout && gotOut != wantOut {
				t.Errorf("stdout holds %d bytes, %d when no output failed", len(gotOut), len(wantOut))
			}
		})
	}
}

// TestIsolateOutputsDistinct: isolate's CSV, image and report (stdout) are
// three files, as every command's outputs: two on one file are refused
// before the logs are read (exit 2, one line naming both), nothing
// written.
func TestIsolateOutputsDistinct(t *testing.T) {
	bin := buildBinary(t)
	cluster, err := filepath.Abs("../../isolate/testdata/cluster6")
	must(t, err)
	tests := []struct {
		name    string
		args    []string
		refused []string
	}{
		{"csv and image one file", []string{"--csv", "x.png", "-o", "x.png"}, []string{"--csv x.png", "--output x.png"}},
		{"image by a dot path", []string{"--csv", "x.svg", "-o", "./x.svg"}, []string{"--csv x.svg", "--output ./x.svg"}},
		{"csv on stdout", []string{"--csv", "-"}, []string{"stdout (the report)", "--csv -"}},
		{"csv on dev stdout", []string{"--csv", "/dev/stdout"}, []string{"stdout (the report)", "--csv /dev/stdout"}},
		{"csv on dev stderr", []string{"--csv", "/dev/stderr"}, []string{"--csv /dev/stderr"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := append([]string{"isolate"}, tc.args...)
			_, stderr, code := runBinaryIn(t, bin, dir, append(cmd, cluster)...)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if code != exitUsage || len(lines) != 1 {
				t.Fatalf("exit %d, stderr %q: want exit 2 and one line", code, stderr)
			}
			for _, w := range tc.refused {
				if !strings.Contains(lines[0], w) {
					t.Errorf("%q does not name %s", lines[0], w)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Errorf("refused, yet %s was written", ents[0].Name())
			}
		})
	}
}

// runBinaryIn runs bin with args in dir and returns its stdout, stderr
// and exit code.
func runBinaryIn(t *testing.T, bin, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	return runCaptured(t, cmd, args)
}
