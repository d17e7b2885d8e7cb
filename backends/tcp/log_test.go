package tcp

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// logNote is what the rank process of TestRankOutputGoesToLog writes.
const logNote = "a note from a rank process"

// TestRankOutputGoesToLog checks that the output of the rank processes the
// backend starts goes to Config.Log, where a caller can capture it, not to
// this process's stderr.
func TestRankOutputGoesToLog(t *testing.T) {
	if os.Getenv(EnvRank) != "" { // this is the rank process
		fmt.Fprintf(os.Stderr, "%s %s\n", logNote, os.Getenv(EnvRank))
		err := Backend{}.Run(context.Background(), backends.Config{Ranks: 2, Options: Options{ConnectTimeout: 20 * time.Second}},
			func(context.Context, backends.Transport) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts a rank process")
	}
	procs, over := runtime.GOMAXPROCS(0), oversubscribed
	t.Cleanup(func() { runtime.GOMAXPROCS(procs); oversubscribed = over })
	var log ftLog
	cfg := backends.Config{Ranks: 2, Log: &log, Options: Options{ConnectTimeout: 20 * time.Second,
		Args: []string{"-test.run=^TestRankOutputGoesToLog$", "-test.timeout=60s"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := (Backend{}).Run(ctx, cfg, func(context.Context, backends.Transport) error { return nil }); err != nil {
		t.Fatalf("run: %v; log:\n%s", err, log.String())
	}
	if want := logNote + " 1\n"; !strings.Contains(log.String(), want) {
		t.Errorf("log %q, want it to hold %q", log.String(), want)
	}
}
