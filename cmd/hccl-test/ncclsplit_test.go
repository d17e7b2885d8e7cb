package main

import (
	"strings"
	"testing"
)

// TestNCCLSplitGroups: nccl-tests' NCCL_TESTS_SPLIT and _MASK, over a
// world of n ranks, become the --groups layout and --group whose groups
// are the ranks of one color, or a one-line refusal.
func TestNCCLSplitGroups(t *testing.T) {
	for _, tc := range []struct {
		split, mask   string
		n             int
		layout, group string
		err           string // part of the refusal, "" for none
	}{
		{split: "MOD 2", n: 8, layout: "tp=2,dp=4", group: "dp"},
		{split: "%4", n: 8, layout: "tp=4,dp=2", group: "dp"},
		{split: "DIV 4", n: 8, layout: "tp=4,dp=2", group: "tp"},
		{split: "/ 2", n: 8, layout: "tp=2,dp=4", group: "tp"},
		{split: "AND 0x1", n: 8, layout: "tp=2,dp=4", group: "dp"},
		{split: "and 5", n: 8, layout: "tp=2,cp=2,dp=2", group: "cp"},
		{split: "OR 1", n: 8, layout: "tp=2,dp=4", group: "tp"},
		{split: "&0b110", n: 8, layout: "tp=2,dp=4", group: "tp"},
		{split: "AND 0", n: 8}, // one color: no split
		{split: "MOD 8", n: 8, layout: "tp=1,dp=8", group: "tp"}, // a rank alone each
		{mask: "0x3", n: 8, layout: "tp=4,dp=2", group: "dp"},
		{mask: "3", split: "DIV 4", n: 8, layout: "tp=4,dp=2", group: "dp"}, // the mask wins, as in nccl-tests
		{mask: "6", n: 8, layout: "tp=2,dp=4", group: "tp"},
		{split: "MOD 0", n: 8, err: "divides by zero"},
		{split: "/0", n: 8, err: "divides by zero"},
		{split: "XOR 1", n: 8, err: "want AND, OR, MOD or DIV"},
		{split: "MOD", n: 8, err: "is not a number"},
		{split: "MOD -2", n: 8, err: "is not a number"},
		{split: "MOD 2x", n: 8, err: "is not a number"},
		{split: "MOD NaN", n: 8, err: "is not a number"},
		{split: "%3", n: 8, err: "every group must have as many ranks"},
		{split: "&0b10", n: 8, err: "not evenly strided blocks"},
		{mask: "zz", n: 8, err: "want a hexadecimal mask"},
		{mask: "-1", n: 8, err: "want a hexadecimal mask"},
	} {
		t.Run(tc.split+"|"+tc.mask, func(t *testing.T) {
			env := map[string]string{"NCCL_TESTS_SPLIT": tc.split, "NCCL_TESTS_SPLIT_MASK": tc.mask}
			s, err := parseNCCLSplit(func(k string) string { return env[k] })
			var layout, group string
			if err == nil {
				layout, group, err = s.groups(tc.n)
			}
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n")):
				t.Fatalf("error %v, want one line with %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case layout != tc.layout || group != tc.group:
				t.Errorf("--groups %q --group %q, want %q %q", layout, group, tc.layout, tc.group)
			}
		})
	}
}
