package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
)

// TestWordingCounts: the header and the dry run count in the singular
// where the count is 1 ("1 size", not "1 sizes"), and the dry run says
// check on or off, as the run's header does.
func TestWordingCounts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		min, max   int64
		check      bool
		want, lack []string
	}{
		{"one size", 1024, 1024, true, []string{"(1 size)", "allreduce (1 row)", "check on"}, []string{"sizes)", "1 rows", "check true"}},
		{"two sizes", 1024, 2048, false, []string{"(2 sizes)", "allreduce (2 rows)", "check off"}, []string{"check false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			p.Ops = []coll.Op{coll.AllReduce}
			p.MinBytes, p.MaxBytes, p.Check = tc.min, tc.max, tc.check
			var b strings.Builder
			if err := p.DryRun(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("dry run lacks %q:\n%s", w, out)
				}
			}
			for _, l := range tc.lack {
				if strings.Contains(out, l) {
					t.Errorf("dry run says %q:\n%s", l, out)
				}
			}
		})
	}
}

// TestRetryHeaderOneTime: --retry 1 reads "up to 1 time".
func TestRetryHeaderOneTime(t *testing.T) {
	p := smallPlan()
	p.Ops, p.MinBytes, p.MaxBytes, p.Retry = []coll.Op{coll.AllReduce}, 64, 64, 1
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.header.Retry, "up to 1 time,") {
		t.Errorf("header says %q about retry, want up to 1 time", c.header.Retry)
	}
}
