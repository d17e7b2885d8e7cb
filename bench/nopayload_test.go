package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/coll"
)

// noPayloadPlan is simPlan on n ranks of two servers, auto's choice of
// algorithm, at one size.
func noPayloadPlan(n int, bytes int64, noPayload bool) Plan {
	p := simPlan(bytes)
	p.Ranks, p.Algo, p.NoPayload = n, coll.Auto, noPayload
	p.Topology = Topology{Servers: 2, PerServer: n / 2}
	p.Iters, p.Warmup = 2, 1
	return p
}

// TestRunNoPayloadSameTime: a row without payload takes the virtual time
// of the same row with payload, is not checked, and says so in the header.
func TestRunNoPayloadSameTime(t *testing.T) {
	var with, without capture
	if _, err := Run(context.Background(), noPayloadPlan(8, 1<<20, false), &with); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), noPayloadPlan(8, 1<<20, true), &without); err != nil {
		t.Fatal(err)
	}
	if len(with.records) != 1 || len(without.records) != 1 {
		t.Fatalf("got %d and %d records, want 1 each", len(with.records), len(without.records))
	}
	a, b := with.records[0], without.records[0]
	if a.TimeUS != b.TimeUS || a.Algo != b.Algo {
		t.Errorf("with payload %v us (%s), without %v us (%s): want the same", a.TimeUS, a.Algo, b.TimeUS, b.Algo)
	}
	if !a.Checked() || a.Wrong != 0 {
		t.Errorf("with payload: checked %v, %d wrong", a.Checked(), a.Wrong)
	}
	if b.Checked() {
		t.Errorf("without payload: checked (%d wrong)", b.Wrong)
	}
	if without.header.Check || !strings.Contains(without.header.Simulated, "no payload: results are not checked") {
		t.Errorf("header: check %v, simulated %q", without.header.Check, without.header.Simulated)
	}
}

// TestRunNoPayloadLarge: 64 ranks of 64 MiB allreduce, 8 GiB of buffers
// with payload, run without any.
func TestRunNoPayloadLarge(t *testing.T) {
	p := noPayloadPlan(64, 64<<20, true)
	p.Topology = Topology{Servers: 8, PerServer: 8}
	p.MemLimit = 1 << 30 // far less than the payload would take
	start := time.Now()
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.records) != 1 || c.records[0].TimeUS <= 0 {
		t.Fatalf("records: %+v", c.records)
	}
	t.Logf("64 ranks x 64 MiB: %.0f us virtual (%s), %v wall", c.records[0].TimeUS, c.records[0].Algo, time.Since(start))
}

// TestRunNoPayloadRetry drops sends at two measured calls of a sweep without
// payload, with re-execution on: the run ends without error, the re-runs
// are counted in the rows and the summary, and every row but the ones
// re-run takes the virtual time of the same row run without faults.
func TestRunNoPayloadRetry(t *testing.T) {
	p := noPayloadPlan(8, 1<<20, true)
	p.MinBytes = 64 << 10
	var clean capture
	if _, err := Run(context.Background(), p, &clean); err != nil {
		t.Fatal(err)
	}
	c, sum := runRetrying(t, p, "fail=op:6@rank=1; fail=op:12@rank=5")
	if len(c.records) != len(clean.records) || len(c.records) != 5 {
		t.Fatalf("%d rows with faults, %d without, want 5 each", len(c.records), len(clean.records))
	}
	rows := 0
	for i, r := range c.records {
		rows += r.Retries
		if r.Retries == 0 && r.TimeUS != clean.records[i].TimeUS {
			t.Errorf("%d B: %v us, %v without faults", r.Bytes, r.TimeUS, clean.records[i].TimeUS)
		}
	}
	if sum.Retries != rows || rows != 2 {
		t.Errorf("summary counts %d re-runs and the rows %d, want 2", sum.Retries, rows)
	}
}

// TestNoPayloadPlan: without payload, the plan counts no memory, and is
// refused off sim and with corrupting faults.
func TestNoPayloadPlan(t *testing.T) {
	p := noPayloadPlan(8, 1<<30, true)
	if got := p.MemoryNeeded(); got != 0 {
		t.Errorf("MemoryNeeded = %d, want 0", got)
	}
	var sb strings.Builder
	if err := p.DryRun(&sb); err != nil || !strings.Contains(sb.String(), "no payload") || !strings.Contains(sb.String(), "check off") {
		t.Errorf("dry run (%v):\n%s", err, sb.String())
	}
	shmPlan := smallPlan()
	shmPlan.NoPayload = true
	corrupt := noPayloadPlan(8, 1<<20, true)
	corrupt = withFaults(t, corrupt, "corrupt=p:0.1")
	corrupt.Check = false
	for name, tc := range map[string]struct {
		p    Plan
		want string
	}{
		"shm":     {shmPlan, "NoPayload"},
		"corrupt": {corrupt, "corrupt"},
	} {
		if err := tc.p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error about %s", name, err, tc.want)
		}
	}
}
