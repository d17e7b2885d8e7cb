package bench

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/units"
)

// cancelAfter is a Sink that keeps every record and cancels the run once
// it has seen a record of run stopAt.
type cancelAfter struct {
	capture
	mu     sync.Mutex
	stopAt int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(r results.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Run >= c.stopAt {
		c.cancel()
	}
	return c.capture.Write(r)
}

func TestRunForeverUntilCancelled(t *testing.T) {
	p := smallPlan()
	p.Ops, p.Placements, p.Root = []coll.Op{coll.AllReduce}, []Placement{OutOfPlace}, 0
	p.Runs, p.Cycles = RunsForever, true
	if err := p.Validate(); err != nil {
		t.Fatalf("a plan that runs until interrupted is refused: %v", err)
	}
	perRun := len(p.Rows())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &cancelAfter{stopAt: 4, cancel: cancel}
	done := make(chan struct{})
	var sum results.Summary
	var err error
	go func() {
		defer close(done)
		sum, err = Run(ctx, p, c)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("a run until interrupted did not end when its context did")
	}
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the cancellation", err)
	}
	if !c.ended || sum.Rows != len(c.records) {
		t.Fatalf("ended %v, summary %d rows, %d written", c.ended, sum.Rows, len(c.records))
	}
	// Runs 1 to 3 whole, each row in its order, the 4th begun.
	if len(c.records) < 3*perRun+1 {
		t.Fatalf("%d records, want the 3 runs before the 4th (%d rows each) and more", len(c.records), perRun)
	}
	for i, r := range c.records[:3*perRun] {
		if want := i/perRun + 1; r.Run != want || r.Bytes != c.records[i%perRun].Bytes {
			t.Errorf("record %d: run %d, %d B; want run %d, %d B", i, r.Run, r.Bytes, want, c.records[i%perRun].Bytes)
		}
	}
	if h := c.header; h.Runs != 0 || h.TotalRows != 0 || !h.Cycles {
		t.Errorf("header runs %d, total rows %d, cycles %v: want 0, 0 (until interrupted), true", h.Runs, h.TotalRows, h.Cycles)
	}
}

func TestForeverPlanIsNotCountedAsUnbounded(t *testing.T) {
	// The row cap counts one run of a sweep that runs until interrupted,
	// and the memory estimate holds no row past its run.
	p := smallPlan()
	once := p
	p.Runs = RunsForever
	if got, want := p.rowCount(), once.rowCount(); got != want {
		t.Errorf("rows of -N 0: %d, want one run's %d", got, want)
	}
	if got, want := p.Memory().Total(), once.Memory().Total(); got != want {
		t.Errorf("memory of -N 0: %d, want one run's %d", got, want)
	}
	p.Runs = -2
	if err := p.Validate(); err == nil {
		t.Error("Runs -2 was accepted")
	}
	var b strings.Builder
	p.Runs = RunsForever
	if err := p.DryRun(&b); err != nil || !strings.Contains(b.String(), "until interrupted") {
		t.Errorf("dry run of -N 0 (%v):\n%s", err, b.String())
	}
}

func TestMemoryReportIsTheEstimate(t *testing.T) {
	p := smallPlan()
	p.ReportMemory = true
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	e := p.Memory()
	parts := strings.Split(strings.TrimSuffix(c.header.Memory, ", for the 3 ranks on this machine"), " | ")
	var want []string
	for _, part := range e.Parts {
		if part.Bytes > 0 {
			want = append(want, part.Name+" "+units.HumanSize(part.Bytes))
		}
	}
	want = append(want, "total "+units.HumanSize(e.Total()))
	if strings.Join(parts, "\n") != strings.Join(want, "\n") || !strings.HasSuffix(c.header.Memory, "for the 3 ranks on this machine") {
		t.Errorf("-M reports %q, want the estimate's parts %q", c.header.Memory, want)
	}
	if !strings.Contains(c.header.Memory, "sweep buffers") {
		t.Errorf("-M reports no sweep buffers: %q", c.header.Memory)
	}
}
