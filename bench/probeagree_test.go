package bench

import (
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/runctl"
)

// TestDescribeLink: the header says how far the probe's repetitions
// spread, and that util is uncertain exactly when they did not agree.
func TestDescribeLink(t *testing.T) {
	for _, agreed := range []bool{true, false} {
		d := describeLink(runctl.Settled{Value: 5, Lo: 0.24, Hi: 5.93, Reps: 4, Agreed: agreed})
		if !strings.Contains(d, "0.24..5.93 GB/s") || strings.Contains(d, "util uncertain") == agreed {
			t.Errorf("agreed %v: %q", agreed, d)
		}
	}
	// One repetition past the time bound: nothing it could agree with.
	d := describeLink(runctl.Settled{Value: 0.29, Lo: 0.29, Hi: 0.29, Reps: 1})
	if !strings.Contains(d, "1 repetition,") || strings.Contains(d, "best 3") || !strings.Contains(d, "util uncertain") {
		t.Errorf("one repetition: %q", d)
	}
}
