package bench

import (
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/world"
)

// TestPartsValidateAlone: the parts check themselves with nothing else
// set, and each check names the field at fault (world's TestWorldFaultsValidate
// checks the World and Faults parts).
func TestPartsValidateAlone(t *testing.T) {
	world := DefaultPlan().World
	tests := []struct {
		name  string
		check func() error
		field fielderr.Field // "" for valid
	}{
		{"default world", world.Validate, ""},
		{"default sweep", DefaultPlan().Sweep.Validate, ""},
		{"empty sweep", Sweep{}.Validate, "Ops"},
		{"negative link", Links{LinkGBps: -1}.Validate, "LinkGBps"},
		{"outputs", Outputs{Stats: true}.Validate, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.check()
			var fe *fielderr.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.field != "" && !errors.As(err, &fe):
				t.Fatalf("got %v, want a *fielderr.FieldError for %s", err, tc.field)
			case tc.field != "" && fe.Field != tc.field:
				t.Fatalf("got %v naming %s, want %s", err, fe.Field, tc.field)
			}
		})
	}
}

// TestValidatePrecedence: with two settings wrong, Plan.Validate names the
// one it named before the plan was made of parts, whichever part each is
// in: World's timeouts after the Sweep's sizes, the Master after the
// domains, the Root between the sizes and the timeouts.
func TestValidatePrecedence(t *testing.T) {
	grouped := func(p *Plan) {
		p.Layout, _ = world.ParseLayout("tp=4,dp=2", p.Ranks)
		p.Groups = []string{"tp"}
	}
	tests := []struct {
		name  string
		edit  func(*Plan)
		field fielderr.Field
	}{
		{"iters before timeout", func(p *Plan) { p.Timeout, p.Iters = 0, 0 }, "Iters"},
		{"root before timeout", func(p *Plan) { p.Timeout, p.Root = 0, 9 }, "Root"},
		{"warmup before connect timeout", func(p *Plan) { p.ConnectTimeout, p.Warmup = 0, -1 }, "Warmup"},
		{"ranks before timeout", func(p *Plan) { p.Timeout, p.Ranks = 0, 0 }, "Ranks"},
		{"root before placement", func(p *Plan) { p.Root, p.Placements = 9, nil }, "Root"},
		{"timeout before link", func(p *Plan) { p.Timeout, p.LinkGBps = 0, -1 }, "Timeout"},
		{"iters before master", func(p *Plan) { p.Master, p.Iters = "nohost", 0 }, "Iters"},
		{"groups before master", func(p *Plan) { p.Master, p.Groups = "nohost", []string{"tp"} }, "Groups"},
		{"fusion before master", func(p *Plan) { p.Master, p.Fusion = "nohost", []int{0} }, "Fusion"},
		{"retry in a group before fusion", func(p *Plan) { grouped(p); p.Retry, p.Fusion = 1, []int{0} }, "Retry"},
		{"native in a group before overlap", func(p *Plan) { grouped(p); p.Algo, p.Overlap = coll.Native, 2*time.Minute }, "Algo"},
		{"kind before fusion", func(p *Plan) { grouped(p); p.Groups, p.Fusion = []string{"ep2"}, []int{0} }, "Groups"},
		{"retry range before group", func(p *Plan) { p.Retry, p.Groups = 11, []string{"tp"} }, "Retry"},
		{"link before counts", func(p *Plan) { p.LinkGBps, p.MinBytes, p.MaxBytes, p.StepBytes = -1, 1, 1<<30, 1 }, "LinkGBps"},
		{"counts before retry", func(p *Plan) { p.MinBytes, p.MaxBytes, p.StepBytes, p.Retry = 1, 1<<30, 1, 11 }, "MinBytes"},
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
