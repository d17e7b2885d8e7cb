package sim_test

import (
	"math"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
)

// TestLinkFigures: the sim reports its link model's figures in the cost
// model's terms (backends.Modeled), from whatever form the harness holds
// the model in, the defaults for none.
func TestLinkFigures(t *testing.T) {
	b, err := backends.Lookup(sim.Name)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := b.(backends.Modeled)
	if !ok {
		t.Fatal("sim is no backends.Modeled")
	}
	given := sim.LinkModel{PerServer: 4, IntraAlpha: 3 * time.Microsecond, IntraGBps: 50, InterGBps: 20, ReduceGBps: 8, Pull: true}
	want := backends.LinkFigures{Alpha: 3e-6, Beta: 1 / 50e9, Gamma: 1 / 8e9, Copy: 1 / 12e9, PerServer: 4,
		InterAlpha: 10e-6, InterBeta: 1 / 20e9, Gap: 1.5e-6, Fused: true}
	def := sim.DefaultLinkModel
	defaults := backends.LinkFigures{Alpha: def.IntraAlpha.Seconds(), Beta: 1 / (def.IntraGBps * 1e9), Gamma: 1 / (def.ReduceGBps * 1e9),
		Copy: 1 / (1.5 * def.ReduceGBps * 1e9), InterAlpha: def.InterAlpha.Seconds(), InterBeta: 1 / (def.IntraGBps * 1e9), Gap: def.IntraAlpha.Seconds() / 2}
	var none *sim.LinkModel
	tests := []struct {
		name string
		own  any
		want backends.LinkFigures
		desc string
	}{
		{"pointer", &given, want, given.Describe(8)},
		{"value", given, want, given.Describe(8)},
		{"nil", nil, defaults, def.Describe(8)},
		{"nil pointer", none, defaults, def.Describe(8)},
		{"another type", "x", defaults, def.Describe(8)},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
	for _, tc := range tests {
		got := m.LinkFigures(backends.Settings{Own: tc.own})
		if !near(got.Alpha, tc.want.Alpha) || !near(got.Beta, tc.want.Beta) || !near(got.Gamma, tc.want.Gamma) ||
			!near(got.Copy, tc.want.Copy) || !near(got.InterAlpha, tc.want.InterAlpha) || !near(got.InterBeta, tc.want.InterBeta) ||
			!near(got.Gap, tc.want.Gap) || got.PerServer != tc.want.PerServer || got.Fused != tc.want.Fused {
			t.Errorf("%s: LinkFigures %+v, want %+v", tc.name, got, tc.want)
		}
		if d := m.DescribeLinks(backends.Settings{Own: tc.own}, 8); d != tc.desc {
			t.Errorf("%s: DescribeLinks %q, want %q", tc.name, d, tc.desc)
		}
	}
}
