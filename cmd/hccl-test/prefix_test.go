package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubcommandNamedOnce checks that an error of plot or compare, wherever
// it arises (the flags, the reading, the writing of the image), names the
// subcommand once: the packages add no command name, the command adds it.
func TestSubcommandNamedOnce(t *testing.T) {
	before := logPath(t, "before.log")
	dir := t.TempDir()
	full := filepath.Join(dir, "full.png") // a write that fails after the drawing
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		cmd  string
		code int
	}{
		{"write fails", []string{"plot", "-o", full, before}, "plot", exitFailed},
		{"missing input", []string{"plot", "-o", filepath.Join(dir, "a.png"), filepath.Join(dir, "none.csv")}, "plot", 2},
		{"no extension", []string{"plot", "-o", filepath.Join(dir, "a"), before}, "plot", 2},
		{"alpha 0", []string{"compare", "--alpha", "0", before, before}, "compare", 2},
		{"threshold", []string{"compare", "--threshold", "-1%", before, before}, "compare", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			msg := stderr.String()
			if code != tc.code || strings.Count(msg, tc.cmd+":") != 1 || strings.Count(msg, "\n") != 1 {
				t.Errorf("exit %d, want %d, and %q named once in one line: %q", code, tc.code, tc.cmd+":", msg)
			}
		})
	}
}
