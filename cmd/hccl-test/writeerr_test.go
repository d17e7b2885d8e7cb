package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteErrors: every command that writes to stdout fails (exit 1, one
// line naming stdout) when stdout is a full disk (/dev/full) or was closed,
// instead of exiting 0 with its output lost; a failed --csv stops the run
// with a footer saying so. A stdout redirected to /dev/null is not closed.
func TestWriteErrors(t *testing.T) {
	bin := buildBinary(t)
	small := []string{"-p", "2", "-b", "1K", "-e", "4K", "-n", "1", "-w", "0", "--link-bw", "10GB/s"}
	benchFile := filepath.Join(t.TempDir(), "r.txt")
	if _, stderr, code := runBinary(t, bin, append([]string{"--bench", benchFile}, small...)...); code != 0 {
		t.Fatalf("writing %s: exit %d: %s", benchFile, code, stderr)
	}
	commands := []struct {
		name string
		args []string
	}{
		{"help", []string{"--help"}},
		{"version", []string{"--version"}},
		{"algorithms", []string{"algorithms"}},
		{"dry run", append([]string{"--dry-run"}, small...)},
		{"sweep", small},
		{"compare", []string{"compare", benchFile, benchFile}},
		{"compare help", []string{"compare", "--help"}},
		{"plot help", []string{"plot", "--help"}},
		{"scenario help", []string{"scenario", "--help"}},
	}
	for _, c := range commands {
		t.Run(c.name+"/dev-full", func(t *testing.T) {
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skip(err)
			}
			defer full.Close()
			cmd := exec.Command(bin, c.args...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = full, &stderr
			_ = cmd.Run()
			wantFailure(t, cmd, stderr.String(), "stdout: write: no space left on device")
		})
		t.Run(c.name+"/closed", func(t *testing.T) {
			cmd := exec.Command("sh", append([]string{"-c", `exec "$0" "$@" >&-`, bin}, c.args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			_ = cmd.Run()
			wantFailure(t, cmd, stderr.String(), "stdout: write: closed")
		})
	}
	t.Run("dev-null", func(t *testing.T) {
		cmd := exec.Command(bin, "algorithms") // os/exec opens /dev/null write-only
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("algorithms >/dev/null: %v: %s", err, stderr.String())
		}
	})
	t.Run("csv-dev-full", func(t *testing.T) {
		stdout, stderr, code := runBinary(t, bin, append([]string{"--csv", "/dev/full"}, small...)...)
		if code != exitFailed || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--csv /dev/full: write: no space left on device") {
			t.Fatalf("exit %d, stderr %q: want exit 1 and one line naming --csv /dev/full", code, stderr)
		}
		if !strings.Contains(stdout, "# stopped early after 0 rows: ") || !strings.Contains(stdout, "--csv /dev/full: write: no space left on device") {
			t.Errorf("the table's footer does not say the run stopped early:\n%s", stdout)
		}
	})
}

// wantFailure checks that cmd exited 1 with one line on stderr holding
// want.
func wantFailure(t *testing.T, cmd *exec.Cmd, stderr, want string) {
	t.Helper()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Errorf("exit %d, want %d; stderr %q", code, exitFailed, stderr)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, programName) || !strings.Contains(stderr, want) {
		t.Errorf("stderr %q: want one line with %q", stderr, want)
	}
}
