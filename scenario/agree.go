package scenario

import (
	"fmt"

	"github.com/hccl-test/hccl-test/runctl"
)

// scenarioFields are the fields of a scenario run that every rank must
// share (runctl.AgreeOn; a sweep's plan has its own): the scenario as read, step by step, and the
// faults.
func scenarioFields(sc *Scenario, o Options) []string {
	f := func(name string, v any) string { return fmt.Sprintf("%s=%v", name, v) }
	out := []string{
		f("version", runctl.Version),
		f("backend", o.Backend),
		f("ranks", sc.Ranks),
		f("groups", sc.Layout.Sizes),
		f("iterations", sc.Iterations),
		f("warmup", sc.Warmup),
		f("slowdown", sc.Slowdown),
		f("steps", len(sc.Steps)),
	}
	for i, st := range sc.Steps {
		out = append(out, f(fmt.Sprintf("step %d", i+1), fmt.Sprintf("%+v", st)))
	}
	return append(out, f("inject", o.InjectText), f("seed", o.Seed), f("sim-data", !o.NoPayload))
}
