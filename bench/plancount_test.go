package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/wallbound"
	"github.com/hccl-test/hccl-test/world"
)

// TestRowCountMatchesRows checks that counting rows by arithmetic gives what
// listing them gives, for plans that exercise every factor.
func TestRowCountMatchesRows(t *testing.T) {
	all := func(p *Plan) {
		p.Ops, p.DTypes, p.RedOps = coll.AllOps(), dtype.All(), dtype.AllOps()
	}
	tests := []struct {
		name string
		edit func(*Plan)
	}{
		{"default", func(p *Plan) {}},
		{"everything every root", func(p *Plan) { all(p); p.Root, p.MinBytes, p.MaxBytes = -1, 1, 1<<20 }},
		{"rounding drops sizes", func(p *Plan) { all(p); p.MinBytes, p.MaxBytes, p.StepFactor = 1, 4096, 1.1 }},
		{"step bytes", func(p *Plan) { all(p); p.MinBytes, p.MaxBytes, p.StepBytes = 0, 1000, 7 }},
		{"fusion and both placements", func(p *Plan) {
			all(p)
			p.MinBytes, p.MaxBytes, p.Fusion = 1, 1<<16, []int{4, 64, 4}
			p.Placements = []Placement{OutOfPlace, InPlace}
		}},
		{"algorithms and runs", func(p *Plan) { p.Algo, p.Runs, p.MinBytes, p.MaxBytes = "ring,rd", 3, 8, 1<<20 }},
		{"groups", func(p *Plan) {
			all(p)
			p.Layout, _ = world.ParseLayout("tp=4,dp=2", 8)
			p.Groups, p.Root, p.MinBytes, p.MaxBytes = []string{"tp", "dp"}, -1, 1, 1<<12
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			tc.edit(&p)
			want := int64(len(p.Rows()) * max(p.Runs, 1))
			if got := p.rowCount(); got != want {
				t.Errorf("rowCount() = %d, listing gives %d", got, want)
			}
		})
	}
}

// TestPlanCaps checks that a plan of too many rows or sizes is refused by
// count, fast and without listing them, and the message names the count.
func TestPlanCaps(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Plan)
		want string
	}{
		{"21 million rows", func(p *Plan) {
			p.Ops, p.DTypes, p.RedOps = coll.AllOps(), dtype.All(), dtype.AllOps()
			p.Root, p.MinBytes, p.MaxBytes, p.StepFactor = -1, 1, 1<<20, 1.0002
		}, "rows ("},
		{"a billion sizes by steps", func(p *Plan) { p.MinBytes, p.MaxBytes, p.StepBytes = 1, 1<<30, 1 }, "has 1073741824 sizes"},
		{"a billion sizes by a factor", func(p *Plan) { p.MinBytes, p.MaxBytes, p.StepFactor = 1, 1<<30, 1.000000001 }, "has about 107"},
		{"runs multiply", func(p *Plan) {
			p.Ops, p.DTypes = coll.AllOps(), dtype.All()
			p.MinBytes, p.MaxBytes, p.StepBytes, p.Runs = 1, 20000, 1, 10
		}, "x 10 runs"},
	}
	// A plan is counted, not listed: refusing it takes about what
	// checking the default plan does (wallbound's slack over it, measured
	// now), where listing a billion sizes would take minutes.
	base := wallbound.Baseline(func() {
		p := DefaultPlan()
		if err := p.Validate(); err != nil {
			t.Fatalf("the default plan: %v", err)
		}
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			tc.edit(&p)
			start := time.Now()
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error with %q", err, tc.want)
			}
			if d, bound := time.Since(start), wallbound.Bound(0, base); d > bound {
				t.Errorf("refusing took %v (the default plan's check %v)", d, base)
			}
		})
	}
}

// TestSizeCountEstimate checks that a sweep past MaxSizes is counted about
// right: within 1% of the true count, which a plain loop gives here.
func TestSizeCountEstimate(t *testing.T) {
	for _, f := range []float64{1.00001, 1.000001} {
		p := DefaultPlan()
		p.MinBytes, p.MaxBytes, p.StepFactor = 1, 1<<30, f
		var want int64
		for s := p.MinBytes; s <= p.MaxBytes; s = p.nextSize(s) {
			want++
		}
		got, exact := p.sizeCount()
		if exact || math.Abs(float64(got-want)) > 0.01*float64(want) {
			t.Errorf("factor %v: sizeCount() = %d (exact %v), want about %d", f, got, exact, want)
		}
	}
}
