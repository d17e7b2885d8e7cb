package scenario

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/traffic"
	"github.com/hccl-test/hccl-test/world"
)

// TestRoutedSteps: a dispatch and its combine of the same traffic carry
// one matrix and its transpose, their buffers hold the largest row and
// column of every draw, and the counts are the same in every parse (every
// process).
func TestRoutedSteps(t *testing.T) {
	file := []byte(`{"ranks": 4, "groups": "ep=4", "steps": [
		{"name": "dispatch", "group": "ep", "op": "alltoallv", "dtype": "bf16", "size": "64K", "traffic": "zipf:s=1.5,tokens=0,hidden=1024"},
		{"name": "combine", "group": "ep", "op": "alltoallv", "dtype": "bf16", "size": "64K", "traffic": "zipf:s=1.5,tokens=0,hidden=1024", "transpose": true},
		{"name": "gather", "group": "ep", "op": "allgatherv", "dtype": "fp32", "size": "64K", "traffic": "hot"}]}`)
	sc, err := Parse(file, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(file, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Steps[0].Draws == nil || sc.Steps[1].Draws == nil || sc.Steps[2].Draws == nil {
		t.Fatal("a routed step without counts")
	}
	d, c := sc.Steps[0].Draws[0].Counts, sc.Steps[1].Draws[0].Counts
	if d.Digest() != again.Steps[0].Draws[0].Counts.Digest() {
		t.Error("two parses drew different counts")
	}
	var mostRow, mostCol int
	for s := range 4 {
		for r := range 4 {
			if d.At(s, r) != c.At(r, s) {
				t.Fatalf("combine's (%d, %d) = %d, dispatch's (%d, %d) = %d", r, s, c.At(r, s), s, r, d.At(s, r))
			}
		}
		mostRow, mostCol = max(mostRow, d.Sent(s)), max(mostCol, d.Received(s))
	}
	if d.Received(0) <= d.Received(3) {
		t.Errorf("zipf's first expert's rank received %d, the last's %d: want more", d.Received(0), d.Received(3))
	}
	for _, dr := range sc.Steps[0].Draws[1:] {
		for r := range 4 {
			mostRow, mostCol = max(mostRow, dr.Counts.Sent(r)), max(mostCol, dr.Counts.Received(r))
		}
	}
	send, recv := sc.Steps[0].BufferBytes(4)
	if send != int64(2*mostRow) || recv != int64(2*mostCol) {
		t.Errorf("buffers (%d, %d), want the largest row and column in bytes (%d, %d)", send, recv, 2*mostRow, 2*mostCol)
	}
}

// TestRoutedStepDraws: a routed step draws one matrix per warm-up and
// timed iteration, up to MaxDraws, when its routing is drawn anew
// (draw=iter, the default), and one otherwise; draw i is the generator's
// iteration i (its seed advanced), the same in every parse, and a
// combine's draw i is the dispatch's turned around.
func TestRoutedStepDraws(t *testing.T) {
	tests := []struct {
		name, spec     string
		warmup, iters  int
		want           int
		differentDraws bool
	}{
		{"per iteration", "zipf:s=1.2,tokens=0,hidden=1024", 1, 3, 4, true},
		{"per iteration, capped", "hot:tokens=0,hidden=1024", 3, 100, MaxDraws, true},
		{"fixed", "zipf:s=1.2,tokens=0,hidden=1024,draw=fixed", 3, 20, 1, false},
		{"spread pattern", "spread", 3, 20, 1, false},
		{"one iteration, no warm-up", "uniform:tokens=0,hidden=1024", 0, 1, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := []byte(fmt.Sprintf(`{"ranks": 4, "groups": "ep=4", "iterations": %d, "warmup": %d, "steps": [
				{"name": "dispatch", "group": "ep", "op": "alltoallv", "size": "64K", "traffic": %q},
				{"name": "combine", "group": "ep", "op": "alltoallv", "size": "64K", "traffic": %q, "transpose": true}]}`,
				tc.iters, tc.warmup, tc.spec, tc.spec))
			sc, err := Parse(file, Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse(file, Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			sp, err := traffic.ParseSpec(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			g, err := traffic.NewGenerator(sp, 4)
			if err != nil {
				t.Fatal(err)
			}
			draws := sc.Steps[0].Draws
			if len(draws) != tc.want || len(sc.Steps[1].Draws) != tc.want {
				t.Fatalf("%d and %d draws, want %d", len(draws), len(sc.Steps[1].Draws), tc.want)
			}
			digests := map[uint64]bool{}
			for i, d := range draws {
				m, err := g.Matrix(i, 64<<10)
				if err != nil {
					t.Fatal(err)
				}
				for s := range 4 {
					for r := range 4 {
						if got, want := int64(4*d.Counts.At(s, r)), m.At(s, r); got != want {
							t.Fatalf("draw %d: %d bytes from %d to %d, the generator's iteration %d has %d", i, got, s, r, i, want)
						}
						if got, want := sc.Steps[1].Draws[i].Counts.At(r, s), d.Counts.At(s, r); got != want {
							t.Fatalf("draw %d: combine's (%d, %d) = %d, dispatch's (%d, %d) = %d", i, r, s, got, s, r, want)
						}
					}
				}
				if d.Counts.Digest() != again.Steps[0].Draws[i].Counts.Digest() {
					t.Errorf("draw %d differs between two parses", i)
				}
				if d.Traffic.Imbalance < 1 {
					t.Errorf("draw %d: imbalance %v", i, d.Traffic.Imbalance)
				}
				digests[d.Counts.Digest()] = true
			}
			if tc.differentDraws && len(digests) < 2 {
				t.Errorf("%d draws, all alike", len(draws))
			}
		})
	}
}

// TestRoutedScenarioRun: a scenario whose routed steps are drawn per
// iteration runs its timed iterations on several draws, and checks the
// draw its checked iteration took (0 wrong); drawn once, every iteration
// runs the one draw. The report's imbalance is the mean of the draws its
// timed calls took: the busiest rank's bytes over the mean (a dispatch's
// and its combine's are the same).
func TestRoutedScenarioRun(t *testing.T) {
	for _, tc := range []struct {
		draw      string
		wantDraws func(int) bool
	}{{"iter", func(n int) bool { return n >= 2 }}, {"fixed", func(n int) bool { return n == 1 }}} {
		t.Run(tc.draw, func(t *testing.T) {
			file := fmt.Appendf(nil, `{"ranks": 4, "groups": "ep=4", "iterations": 6, "warmup": 1, "steps": [
				{"name": "router", "compute": "100us"},
				{"name": "dispatch", "group": "ep", "op": "alltoallv", "size": "32K", "traffic": "zipf:s=1.5,tokens=0,hidden=512,draw=%s"},
				{"name": "combine", "group": "ep", "op": "alltoallv", "size": "32K", "traffic": "zipf:s=1.5,tokens=0,hidden=512,draw=%s", "transpose": true}]}`,
				tc.draw, tc.draw)
			sc, err := Parse(file, Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			rep, err := Run(context.Background(), sc, Options{World: world.World{Backend: "shm", Timeout: 30 * time.Second}}, &out)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Wrong != 0 {
				t.Errorf("%d wrong", rep.Wrong)
			}
			ep := rep.Domains[0]
			if ep.Domain != "ep" || !tc.wantDraws(ep.Draws/2) {
				t.Fatalf("domain %s took %d draws over its two steps", ep.Domain, ep.Draws)
			}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, st := range sc.Steps[1:] {
				for _, d := range st.Draws {
					b := float64(d.Traffic.MaxBytes) / d.Traffic.RecvMean
					lo, hi = min(lo, b), max(hi, b)
				}
			}
			if ep.Imbalance < lo || ep.Imbalance > hi || tc.draw == "fixed" && ep.Imbalance != hi {
				t.Errorf("imbalance %v, the draws' from %v to %v", ep.Imbalance, lo, hi)
			}
			if !strings.Contains(out.String(), "# ep traffic as drawn: imbalance") {
				t.Errorf("the report does not give the drawn imbalance:\n%s", out.String())
			}
		})
	}
}
