package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/internal/wallbound"
	"golang.org/x/sys/unix"
)

// TestPredictTwoFIFOs: predict's two outputs are FIFOs that nobody opens
// for reading. Both are given up, in one line and exit 1, after the idle
// time once (they are waited on together), not once each. The idle time
// is set from the slack of a healthy run measured now (wallbound), twice
// it, so that the bound (the idle time and the slack) falls before two
// idle times whatever the host's load: waiting on one output after the
// other cannot pass.
func TestPredictTwoFIFOs(t *testing.T) {
	model := filepath.Join("..", "..", "predict", "testdata", "model.json")
	dir := t.TempDir()
	args := func(csv, out string) []string {
		return []string{"predict", "--model", model, "--topology", "servers=4,per-server=4", "--csv", csv, "--export", "simai", "-o", out}
	}
	base := wallbound.Baseline(func() {
		var stdout, stderr bytes.Buffer
		if code := run(args(filepath.Join(dir, "p.csv"), filepath.Join(dir, "p.simai")), &stdout, &stderr); code != exitOK {
			t.Fatalf("predict to files: exit %d: %s", code, stderr.String())
		}
	})
	defer func(d time.Duration) { outputIdle = d }(outputIdle)
	outputIdle = 2 * wallbound.Slack(base)
	bound := wallbound.Bound(outputIdle, base)

	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	must(t, unix.Mkfifo(a, 0o600))
	must(t, unix.Mkfifo(b, 0o600))
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- run(args(a, b), &stdout, &stderr) }()
	var code int
	select {
	case code = <-done:
	case <-time.After(bound):
		t.Fatalf("still waiting on the FIFOs after %v: the idle time is %v, a run to files takes %v", bound, outputIdle, base)
	}
	took := time.Since(start)
	if took < outputIdle {
		t.Errorf("given up after %v, before the idle time of %v", took, outputIdle)
	}
	line := stderr.String()
	if code != exitFailed || strings.Count(line, "\n") != 1 || strings.Count(line, "a named pipe that nobody opened for reading") != 2 ||
		!strings.Contains(line, "--csv "+a) || !strings.Contains(line, "-o "+b) {
		t.Errorf("exit %d, stderr %q: want exit 1 and one line giving up on both FIFOs", code, line)
	}

	// Two outputs on one file are still refused, before anything is written.
	stderr.Reset()
	if code := run(args(a, a), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "are one file") {
		t.Errorf("--csv and -o on one FIFO: exit %d, stderr %q; want 2, one file", code, stderr.String())
	}
}
