package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsCollide: two outputs on one file, however spelled, are refused
// before anything runs (exit 2, one line naming both), and nothing is
// created or truncated; /dev/null and a stderr of its own are not
// collisions.
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
		{name: "csv on a stderr of its own", args: []string{"--csv", "/dev/stderr"}, stderr: "file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
			must(t, os.Symlink("x", filepath.Join(dir, "link")))
			must(t, os.WriteFile(filepath.Join(dir, "old"), []byte("kept\n"), 0o644))
			must(t, os.Link(filepath.Join(dir, "old"), filepath.Join(dir, "hard")))
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
					if !strings.HasPrefix(string(b), "schema_version,") || strings.Count(string(b), "\n") != 2 {
						t.Errorf("stderr's file holds %q, want the CSV header and one row", b)
					}
				}
				return
			}
			line := out.String()
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
