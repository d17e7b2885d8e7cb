package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/results"
)

// TestRunRetry drops three sends at fixed calls of a sweep of every
// collective, in and out of place, with re-execution on: the run must end
// without error, every row checked correct, and the re-runs counted in the
// rows they happened in and in the summary.
func TestRunRetry(t *testing.T) {
	p := smallPlan()
	p.Algo = "ring"
	p.OpAlgos = map[coll.Op]string{}
	for _, op := range p.Ops {
		if !coll.Supports(op, "ring") {
			p.OpAlgos[op] = coll.Names(op)[0]
		}
	}
	c, sum := runRetrying(t, p, "fail=op:300@rank=1; fail=op:600@rank=2; fail=op:900@rank=0")
	rows := 0
	for _, r := range c.records {
		if r.Wrong != 0 {
			t.Errorf("%s %s %d B in-place %v: %d wrong", r.Op, r.DType, r.Bytes, r.InPlace, r.Wrong)
		}
		rows += r.Retries
	}
	// A fault at a call fires only if its rank sends in that call (a
	// broadcast leaf does not), so one to three of them fire.
	if sum.Retries != rows || rows < 1 || rows > 3 {
		t.Errorf("summary counts %d re-runs and the rows %d, want the same, 1 to 3", sum.Retries, rows)
	}
	if !strings.Contains(c.header.Retry, "up to 2 times") {
		t.Errorf("header says %q about retry", c.header.Retry)
	}
}

// TestRunRetryGivesUp makes every attempt of a call fail: the run ends with
// the error, naming the re-runs, and keeps the rows measured before it.
func TestRunRetryGivesUp(t *testing.T) {
	p := smallPlan()
	p.Ops, p.Algo = []coll.Op{coll.AllReduce}, "ring"
	p = withFaults(t, p, "fail=op:80@rank=1; fail=op:81@rank=1; fail=op:82@rank=1")
	p.Retry = 2
	var c capture
	_, err := Run(context.Background(), p, &c)
	if err == nil || !strings.Contains(err.Error(), "giving up after 2 re-runs") {
		t.Fatalf("got %v, want a run that gave up", err)
	}
	if len(c.records) == 0 || !c.ended {
		t.Errorf("%d rows kept, footer written %v", len(c.records), c.ended)
	}
}

// withFaults returns p with the faults of spec injected (--inject spec).
func withFaults(t *testing.T, p Plan, spec string) Plan {
	t.Helper()
	var err error
	p.InjectText = spec
	if p.Inject, err = inject.Parse(spec); err != nil {
		t.Fatal(err)
	}
	return p
}

// runRetrying runs p with the faults of spec and up to 2 re-runs of an op,
// which must end without error.
func runRetrying(t *testing.T, p Plan, spec string) (capture, results.Summary) {
	t.Helper()
	p = withFaults(t, p, spec)
	p.Retry, p.RetrySource = 2, "--retry"
	var c capture
	sum, err := Run(context.Background(), p, &c)
	if err != nil {
		t.Fatal(err)
	}
	return c, sum
}
