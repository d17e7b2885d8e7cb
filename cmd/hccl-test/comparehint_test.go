package main

import (
	"testing"

	"github.com/hccl-test/hccl-test/results"
)

// TestRunsHint checks how compare says to measure a row more often: with
// --runs for files of ours, with each tool's own way for its logs.
func TestRunsHint(t *testing.T) {
	ours, nccl, hccl := &results.Samples{}, &results.Samples{Source: "nccl-tests"}, &results.Samples{Source: "hccl_test"}
	for _, tc := range []struct {
		old, cur *results.Samples
		want     string
	}{
		{ours, ours, "4 runs a side (--runs 4)"},
		{nccl, nccl, "4 measurements of each row a side (nccl-tests' -N 4 measures each row 4 times in one log)"},
		{hccl, hccl, "4 measurements of each row a side (4 runs of hccl_test, their logs in one file)"},
		{nccl, ours, "4 measurements of each row a side (nccl-tests' -N 4 measures each row 4 times in one log; --runs 4 for hccl-test's)"},
		{hccl, nccl, "4 measurements of each row a side (4 runs of hccl_test, their logs in one file; nccl-tests' -N 4 measures each row 4 times in one log)"},
	} {
		if got := runsHint(4, tc.old, tc.cur); got != tc.want {
			t.Errorf("%q vs %q: %q, want %q", tc.old.Source, tc.cur.Source, got, tc.want)
		}
	}
}
