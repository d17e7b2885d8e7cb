package bench

import (
	"errors"
	"slices"
	"testing"

	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/world"
)

// TestValidateOrder pins the order of Plan.Validate's rules, each part's
// own and those spanning parts (""), as the list a reader checks a new
// rule's place against: the order says which of two wrong settings a user
// is told about.
func TestValidateOrder(t *testing.T) {
	want := []string{
		"World who", "Sweep sizes", "benchtime", "root", "Sweep placements",
		"World timeouts", "Links bandwidths", "inter link", "counts", "inject",
		"Faults faults", "retry backend", "Outputs outputs", "group layout",
		"Domains groups", "group runs", "Domains ranges", "fusion", "traffic", "sim",
		"Method method", "cpu time", "World master", "backend", "algorithms",
		"memory", "limits",
	}
	var got []string
	p := DefaultPlan()
	for _, r := range p.rules() {
		name := r.name
		if r.part != "" {
			name = r.part + " " + r.name
		}
		got = append(got, name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Plan.Validate's rules\n got %q\nwant %q", got, want)
	}
}

// TestPartsHoldTheirRules: a rule of one part refuses a plan built in Go
// alike through the part's own Validate and through Plan.Validate, with
// the same text, including the rules the command line used to hold
// (--runs at least 1, --stepbytes not 0, --stepfactor against
// --stepbytes, --check not negative).
func TestPartsHoldTheirRules(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Plan)
		part func(Plan) error
		want string
	}{
		{"runs 0", func(p *Plan) { p.Runs = 0 }, func(p Plan) error { return p.Sweep.Validate() },
			"Runs 0: must be at least 1"},
		{"runs -2", func(p *Plan) { p.Runs = -2 }, func(p Plan) error { return p.Sweep.Validate() },
			"Runs -2: must be at least 1"},
		{"both steps set", func(p *Plan) { p.StepBytes, p.StepsSet = 1024, FactorSet|BytesSet },
			func(p Plan) error { return p.Sweep.Validate() }, "StepFactor and StepBytes: give one of them, not both"},
		{"step bytes set to 0", func(p *Plan) { p.StepsSet = BytesSet }, func(p Plan) error { return p.Sweep.Validate() },
			"StepBytes 0: the size would never grow"},
		{"check iters negative", func(p *Plan) { p.CheckIters = -1 }, func(p Plan) error { return p.Method.Validate() },
			"CheckIters -1: want 0 (don't check) or the checked runs per row (1 or more)"},
		{"check iters too many", func(p *Plan) { p.CheckIters = MaxCheckIters + 1 }, func(p Plan) error { return p.Method.Validate() },
			"CheckIters 10001: want 0 to 10000 checked runs per row"},
		{"no placement", func(p *Plan) { p.Placements = nil }, func(p Plan) error { return p.Sweep.Validate() },
			"Placements: none given"},
		{"ranks", func(p *Plan) { p.Ranks = 0 }, func(p Plan) error { return p.World.Validate() },
			"Ranks 0: need at least 1 rank"},
		{"master", func(p *Plan) { p.Master = "nohost" }, func(p Plan) error { return p.World.Validate() },
			`Master "nohost": want host:port, rank 0's rendezvous address`},
		{"retry", func(p *Plan) { p.Retry = 11 }, func(p Plan) error { return p.Faults.Validate() },
			"Retry 11: want 0 (off) to 10 re-runs per op"},
		{"min busbw", func(p *Plan) { p.MinBusBW = -1 }, func(p Plan) error { return p.Outputs.Validate() },
			"MinBusBW -1: want a positive number of GB/s"},
		{"group kind", func(p *Plan) { p.Layout, _ = world.ParseLayout("tp=4,dp=2", p.Ranks); p.Groups = []string{"xx"} }, func(p Plan) error { return p.Domains.Validate() },
			`Groups "xx": unknown kind (want ` + kindList() + `)`},
		{"blocking", func(p *Plan) { p.Blocking = 9 }, func(p Plan) error { return p.Method.Validate() },
			"Blocking 9: want 0 to 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			if err := p.Validate(); err != nil {
				t.Fatalf("the default plan: %v", err)
			}
			tc.edit(&p)
			partErr, planErr := tc.part(p), p.Validate()
			if partErr == nil || partErr.Error() != tc.want {
				t.Errorf("the part's Validate = %v, want %q", partErr, tc.want)
			}
			if planErr == nil || planErr.Error() != tc.want {
				t.Errorf("Plan.Validate = %v, want %q", planErr, tc.want)
			}
		})
	}
}

// kindList is the kinds of domain a Groups error lists.
func kindList() string {
	s := ""
	for i, k := range world.GroupKinds {
		if i > 0 {
			s += " "
		}
		s += k
	}
	return s
}

// TestValidateWinner: with two rules broken, the one earlier in
// TestValidateOrder's list (or, within a part, in the part's own order) is
// the one reported, for the rules the command line used to hold and their
// neighbours.
func TestValidateWinner(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Plan)
		field fielderr.Field
	}{
		{"ranks before runs", func(p *Plan) { p.Ranks, p.Runs = 0, 0 }, "Ranks"},
		{"sizes before steps set", func(p *Plan) { p.MinBytes, p.MaxBytes, p.StepsSet = 5, 4, BytesSet }, "MinBytes"},
		{"steps set before step values", func(p *Plan) { p.StepFactor, p.StepsSet = 0.5, BytesSet }, "StepBytes"},
		{"both set before bytes 0", func(p *Plan) { p.StepsSet = FactorSet | BytesSet }, "StepFactor"},
		{"step values before runs", func(p *Plan) { p.StepFactor, p.Runs = 1, 0 }, "StepFactor"},
		{"runs before iters", func(p *Plan) { p.Runs, p.Iters = 0, 0 }, "Runs"},
		{"runs before root", func(p *Plan) { p.Runs, p.Root = 0, 99 }, "Runs"},
		{"runs before timeout", func(p *Plan) { p.Runs, p.Timeout = 0, 0 }, "Runs"},
		{"faults before check iters", func(p *Plan) { p.Retry, p.CheckIters = 11, -1 }, "Retry"},
		{"check iters before cpu time on sim", func(p *Plan) { p.Backend, p.CPUTime, p.CheckIters = "sim", true, -1 }, "CheckIters"},
		{"average before check iters", func(p *Plan) { p.Average, p.CheckIters = 9, -1 }, "Average"},
		{"check iters before master", func(p *Plan) { p.Master, p.CheckIters = "nohost", -1 }, "CheckIters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			tc.edit(&p)
			var fe *fielderr.FieldError
			if err := p.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.field)
			}
		})
	}
}
