package bench

import (
	"fmt"
	"time"

	"github.com/hccl-test/hccl-test/runctl"
)

// describeLink says, for the header, how the link probe's repetitions
// (runctl.Settle) went.
func describeLink(f runctl.Settled) string {
	if f.Agreed {
		return fmt.Sprintf("the median of the best %d of %d repetitions, within %.0f%% of each other (all: %.3g..%.3g GB/s)",
			runctl.SettleBest, f.Reps, 100*runctl.SettleAgree, f.Lo, f.Hi)
	}
	took := f.Took.Round(time.Millisecond)
	if f.Reps == 1 {
		return fmt.Sprintf("1 repetition, which took %v, past the bound of %v: nothing to agree with (%.3g GB/s); util uncertain",
			took, runctl.SettleMaxTime, f.Value)
	}
	return fmt.Sprintf("%d repetitions in %v did not agree: the best %d not within %.0f%% of each other (all: %.3g..%.3g GB/s), the median of the best %d taken; util uncertain",
		f.Reps, took, min(f.Reps, runctl.SettleBest), 100*runctl.SettleAgree, f.Lo, f.Hi, min(f.Reps, runctl.SettleBest))
}
