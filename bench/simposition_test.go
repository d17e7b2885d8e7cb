package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
)

// TestSimRowPosition: in virtual time a row costs the same wherever it
// stands in the run. The same row (rhd allreduce of 64 KiB on 32 ranks,
// and on 4 servers of 8) measured first, after another algorithm's rows,
// and after smaller sizes reads the identical time, minimum and maximum:
// every row starts from one instant on idle links, whatever the rows
// before it left on the clocks and ports.
func TestSimRowPosition(t *testing.T) {
	const bytes = 64 << 10
	arrangements := []struct {
		name     string
		algo     string
		min      int64
		iters    int
		warmup   int
		twoLevel bool
	}{
		{"first", "rhd", bytes, 1, 0, false},
		{"after ring", "ring,rhd", bytes, 1, 0, false},
		{"after ring and rd", "ring,rd,rhd", bytes, 1, 0, false},
		{"after smaller sizes", "rhd", bytes / 4, 1, 0, false},
		{"first, warmed up", "rhd", bytes, 3, 1, false},
		{"after ring, warmed up", "ring,rhd", bytes, 3, 1, false},
		{"after smaller sizes, warmed up", "rhd", bytes / 4, 3, 1, false},
		{"first, 4 servers", "rhd", bytes, 1, 0, true},
		{"after ring, 4 servers", "ring,rhd", bytes, 1, 0, true},
		{"after smaller sizes, 4 servers", "rhd", bytes / 4, 1, 0, true},
	}
	type times struct{ time, min, max float64 }
	want := map[string]times{} // by iterations and topology, from the row measured first
	for _, a := range arrangements {
		t.Run(a.name, func(t *testing.T) {
			p := simPlan(bytes)
			p.Ranks, p.NoPayload, p.Check = 32, true, false
			p.Ops, p.Algo, p.MinBytes = []coll.Op{coll.AllReduce}, a.algo, a.min
			p.Iters, p.Warmup = a.iters, a.warmup
			key := fmt.Sprintf("%d iterations on one server", a.iters)
			if a.twoLevel {
				p.Topology = Topology{Servers: 4, PerServer: 8}
				p.LinkInterGBps = 10
				withSim(&p, func(o *sim.Own) { o.InterAlpha = o.Alpha * 4 })
				key = fmt.Sprintf("%d iterations on four servers", a.iters)
			}
			var c capture
			if _, err := Run(context.Background(), p, &c); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d rows, the last %.3f us", key, len(c.records), c.records[len(c.records)-1].TimeUS)
			last := c.records[len(c.records)-1]
			if last.Algo != "rhd" || last.Bytes != bytes {
				t.Fatalf("last row is %s of %d bytes, want rhd of %d", last.Algo, last.Bytes, bytes)
			}
			got := times{last.TimeUS, last.MinUS, last.MaxUS}
			if len(c.records) == 1 {
				want[key] = got
				return
			}
			w, ok := want[key]
			if !ok {
				t.Fatalf("no row measured first for %s", key)
			}
			if got != w {
				t.Errorf("after %d other rows: time %v, min %v, max %v us; measured first: %v, %v, %v us",
					len(c.records)-1, got.time, got.min, got.max, w.time, w.min, w.max)
			}
		})
	}
}
