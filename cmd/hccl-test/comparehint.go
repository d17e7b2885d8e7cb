package main

import (
	"fmt"

	"github.com/hccl-test/hccl-test/results"
)

// runsHint says how to get n measurements of each row a side, for
// compare's message about a change too few measurements can decide:
// "--runs 4" where both files are hccl-test's; for a log of another tool,
// that tool's way (nccl-tests' and rccl-tests' -N; hccl_test and
// nccom-test measure a row once, so n runs whose logs are put in one
// file), since --runs is no flag of theirs.
func runsHint(n int, old, cur *results.Samples) string {
	var tools []string
	for _, s := range []*results.Samples{old, cur} {
		if s != nil && s.Source != "" && (len(tools) == 0 || tools[0] != s.Source) {
			tools = append(tools, s.Source)
		}
	}
	if len(tools) == 0 {
		return fmt.Sprintf("%d runs a side (--runs %d)", n, n)
	}
	hint := fmt.Sprintf("%d measurements of each row a side (", n)
	for i, tool := range tools {
		if i > 0 {
			hint += "; "
		}
		switch tool {
		case "nccl-tests", "rccl-tests":
			hint += fmt.Sprintf("%s -N %d measures each row %d times in one log", possessive(tool), n, n)
		default:
			hint += fmt.Sprintf("%d runs of %s, their logs in one file", n, tool)
		}
	}
	if old.Source == "" || cur.Source == "" {
		hint += fmt.Sprintf("; --runs %d for hccl-test's", n)
	}
	return hint + ")"
}
