package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputsCollide: two outputs on one file, however spelled, are refused
// before anything runs (exit 2, one line naming both), and nothing is
// created or truncated; /dev/null is not a collision. stderr is an output:
// a file output on stderr's file (--csv c.csv 2> c.csv) is refused, as the
// error lines would go among its rows; when stderr is stdout's file it is
// compared as stdout.
func TestOutputsCollide(t *testing.T) {
	bin := buildBinary(t)
	small := []string{"-p", "2", "-b", "1K", "-e", "1K", "-n", "1", "-w", "0", "--link-bw", "10GB/s"}
	tests := []struct {
		name    string
		env     []string
		args    []string
		stderr  string // "": stderr is stdout's pipe; "file": a file of its own
		refused []string
	}{
		{name: "same name", args: []string{"--csv", "x", "--json", "x"}, refused: []string{"--csv x", "--json x"}},
		{name: "dot slash", args: []string{"--csv", "x", "--json", "./x"}, refused: []string{"--csv x", "--json ./x"}},
		{name: "dot dot", args: []string{"--csv", "x", "--bench", "sub/../x"}, refused: []string{"--csv x", "--bench sub/../x"}},
		{name: "dangling symlink", args: []string{"--csv", "link", "--bench", "x"}, refused: []string{"--csv link", "--bench x"}},
		{name: "existing and hard link", args: []string{"--csv", "old", "--json", "hard"}, refused: []string{"--csv old", "--json hard"}},
		{name: "dev stdout and the table", args: []string{"--csv", "/dev/stdout"}, refused: []string{"the table on stdout", "--csv /dev/stdout"}},
		{name: "proc fd 1 and the table", args: []string{"--json", "/proc/self/fd/1"}, refused: []string{"the table on stdout", "--json /proc/self/fd/1"}},
		{name: "dev fd 1 and csv on stdout", args: []string{"--csv", "-", "--bench", "/dev/fd/1"}, refused: []string{"--csv -", "--bench /dev/fd/1"}},
		{name: "stderr is stdout", args: []string{"--csv", "/dev/stderr"}, refused: []string{"the table on stdout", "--csv /dev/stderr"}},
		{name: "cpu profile", env: []string{envCPUProfile + "=x"}, args: []string{"--csv", "./x"}, refused: []string{"--csv ./x", envCPUProfile + "=x"}},
		{name: "dev null twice", args: []string{"--csv", "/dev/null", "--json", "/dev/null"}},
		{name: "csv on a stderr of its own", args: []string{"--csv", "/dev/stderr"}, stderr: "file", refused: []string{"stderr", "--csv /dev/stderr"}},
		{name: "csv on stderr's file", args: []string{"--csv", "stderr"}, stderr: "file", refused: []string{"stderr", "--csv stderr"}},
		{name: "json on stderr's file by a link", args: []string{"--json", "errlink"}, stderr: "file", refused: []string{"stderr", "--json errlink"}},
		{name: "csv on stdout with stderr a file", args: []string{"--csv", "-"}, stderr: "file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
			must(t, os.Symlink("x", filepath.Join(dir, "link")))
			must(t, os.WriteFile(filepath.Join(dir, "old"), []byte("kept\n"), 0o644))
			must(t, os.Link(filepath.Join(dir, "old"), filepath.Join(dir, "hard")))
			must(t, os.Symlink("stderr", filepath.Join(dir, "errlink")))
			cmd := exec.Command(bin, append(tc.args, small...)...)
			cmd.Dir, cmd.Env = dir, append(os.Environ(), tc.env...)
			r, w, err := os.Pipe()
			must(t, err)
			cmd.Stdout, cmd.Stderr = w, w
			errPath := filepath.Join(dir, "stderr")
			if tc.stderr == "file" {
				f, err := os.Create(errPath)
				must(t, err)
				defer f.Close()
				cmd.Stderr = f
			}
			must(t, cmd.Start())
			w.Close()
			var out bytes.Buffer
			_, _ = out.ReadFrom(r)
			_ = cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if tc.refused == nil {
				if code != 0 {
					t.Fatalf("exit %d, want 0: %s", code, out.String())
				}
				if tc.stderr == "file" {
					b, err := os.ReadFile(errPath)
					must(t, err)
					if len(b) != 0 {
						t.Errorf("stderr's file holds %q, want nothing", b)
					}
					if !strings.HasPrefix(out.String(), "schema_version,") || strings.Count(out.String(), "\n") != 2 {
						t.Errorf("stdout holds %q, want the CSV header and one row", out.String())
					}
				}
				return
			}
			line := out.String()
			if tc.stderr == "file" {
				b, err := os.ReadFile(errPath)
				must(t, err)
				line = string(b)
			}
			if code != exitUsage || strings.Count(line, "\n") != 1 || !strings.Contains(line, "one file") {
				t.Fatalf("exit %d, output %q: want exit 2 and one line saying the outputs are one file", code, line)
			}
			for _, name := range tc.refused {
				if !strings.Contains(line, name) {
					t.Errorf("%q does not name %q", line, name)
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, "x")); err == nil {
				t.Error("refused, yet x was created")
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "old")); string(b) != "kept\n" {
				t.Errorf("refused, yet old now holds %q", b)
			}
		})
	}
}

// TestConcurrentRunsOneCSV: a run whose --csv another run is writing is
// refused before any rank starts (exit 2, one line naming the file and the
// process that holds it), and leaves that file alone: the first run's
// rows are all in it.
func TestConcurrentRunsOneCSV(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "rows.csv")
	first := exec.Command(bin, "-p", "2", "-b", "1K", "-e", "64M", "-f", "2", "-n", "50", "-w", "1", "--link-bw", "10GB/s", "--csv", csvPath)
	stdout, err := first.StdoutPipe()
	must(t, err)
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	must(t, first.Start())
	defer func() { _ = first.Process.Kill() }()
	// Once the first run has printed a row it holds the file.
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !isRow(sc.Text()) {
	}

	for _, args := range [][]string{
		{"--csv", csvPath},
		{"--json", filepath.Join(dir, ".", "rows.csv")},
	} {
		_, stderr, code := runBinary(t, bin, append(args, "-p", "2", "-b", "1K", "-e", "1K", "-n", "1", "-w", "0", "--link-bw", "10GB/s")...)
		want := fmt.Sprintf("being written by process %d (hccl-test)", first.Process.Pid)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, args[1]) {
			t.Errorf("%v: exit %d, stderr %q: want exit 2 and one line naming the file and %q", args, code, stderr, want)
		}
	}

	// The first run goes on: stopped, it has every row it measured.
	_ = first.Process.Signal(syscall.SIGINT)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	_ = first.Wait()
	m := stoppedRE.FindStringSubmatch(firstErr.String())
	if m == nil {
		t.Fatalf("the first run's stderr %q does not say how many rows it measured", firstErr.String())
	}
	if recs := readCSVFile(t, csvPath); fmt.Sprint(len(recs)-1) != m[1] {
		t.Errorf("the CSV holds %d rows, the first run measured %s", len(recs)-1, m[1])
	}
}
