package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hccl-test/hccl-test/bench"
)

// parseDomains reads --groups (already in p.LayoutText), --group, --fusion
// and --overlap into p. Checks that need the whole plan are left to
// Plan.Validate.
func parseDomains(p *bench.Plan, groups, fusion, overlap string) error {
	if p.LayoutText != "" {
		l, err := bench.ParseLayout(p.LayoutText, p.Ranks)
		if err != nil {
			return err
		}
		p.Layout = l
	}
	if groups != "" {
		for _, g := range strings.Split(groups, ",") {
			p.Groups = append(p.Groups, strings.ToLower(strings.TrimSpace(g)))
		}
	}
	if fusion != "" {
		for _, f := range strings.Split(fusion, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return fmt.Errorf("--fusion %q: %q is not a bucket count", fusion, f)
			}
			p.Fusion = append(p.Fusion, n)
		}
	}
	switch {
	case overlap == "":
	case strings.EqualFold(overlap, "auto"):
		p.OverlapAuto = true
	default:
		var d durationValue
		if err := d.Set(overlap); err != nil {
			return fmt.Errorf("--overlap: %w, or auto", err)
		}
		if d.duration() <= 0 {
			return fmt.Errorf("--overlap %s: want a positive duration, or auto", overlap)
		}
		p.Overlap = d.duration()
	}
	return nil
}
