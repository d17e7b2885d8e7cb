package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/internal/hugemem"
	"github.com/hccl-test/hccl-test/internal/memguard"
)

// TestGuardMemory checks the wiring of the run's memory guard: a process
// that grows past its estimate by the margin has its run cancelled, and
// the run ends with the guard's one line, naming both sizes.
func TestGuardMemory(t *testing.T) {
	if _, err := memguard.Resident(); err != nil {
		t.Skip(err)
	}
	var stdout, stderr bytes.Buffer
	set := newOutputSet(&stdout, &stderr)
	ctx, stop := guardMemory(context.Background(), 1<<20, set)
	defer stop()
	// Past 1 MiB and the margin of 256 MiB, in fresh memory (the heap
	// may hold pages that earlier tests freed).
	grow, free, err := hugemem.Alloc(320 << 20)
	if err != nil {
		t.Skip(err)
	}
	defer free()
	for i := 0; i < len(grow); i += 4096 {
		grow[i] = 1
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the guard did not stop a run 320 MiB past its estimate")
	}
	if !memoryStopped(ctx, set) {
		t.Fatalf("memoryStopped = false; cause %v", context.Cause(ctx))
	}
	if code := set.finish(exitStopped); code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	line := stderr.String()
	if strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, programName+": resident memory ") || !strings.Contains(line, "estimate of 1.0MiB") {
		t.Errorf("stderr %q: want one line naming the resident size and the estimate", line)
	}

	// A run within its estimate is left alone.
	stderr.Reset()
	set = newOutputSet(&stdout, &stderr)
	ctx, stop2 := guardMemory(context.Background(), 1<<40, set)
	time.Sleep(200 * time.Millisecond)
	stop2()
	if memoryStopped(ctx, set) || set.finish(exitOK) != exitOK || stderr.Len() != 0 {
		t.Errorf("a run within its estimate was stopped: %q", stderr.String())
	}
}
