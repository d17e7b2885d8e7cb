package tcp

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDescribeExit: a child killed by a signal is named by the signal's
// number and name ("was killed by killed" before).
func TestDescribeExit(t *testing.T) {
	tests := []struct {
		script, want string
	}{
		{"kill -9 $$", "was killed by signal 9 (SIGKILL)"},
		{"kill -15 $$", "was killed by signal 15 (SIGTERM)"},
		{"exit 3", "exited with status 3"},
	}
	for _, tc := range tests {
		err := exec.Command("sh", "-c", tc.script).Run()
		if got := describeExit(err); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.script, got, tc.want)
		}
	}
}

// TestChildrenFailedBounded: when many children end badly, the error
// describes a few and names the rest as ranges, in bounded length.
func TestChildrenFailedBounded(t *testing.T) {
	cs := &children{}
	for r := 1; r < 100; r++ {
		cmd := exec.Command("sh", "-c", "exit 1")
		err := cmd.Run()
		done := make(chan struct{})
		close(done)
		cs.procs = append(cs.procs, &child{rank: r, last: &lastLine{}, cmd: cmd, done: done, err: err})
	}
	got := cs.failed().Error()
	if !strings.Contains(got, "rank 4 (pid ") || strings.Contains(got, "rank 5 (pid ") ||
		!strings.HasSuffix(got, "; and ranks 5-99 ended badly too") || len(got) > 400 {
		t.Errorf("got %q", got)
	}
}
