package tcp

import (
	"os/exec"
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
