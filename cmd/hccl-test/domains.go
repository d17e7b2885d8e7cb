package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/internal/limits"
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
			n, err := limits.Count(f)
			switch {
			case errors.Is(err, limits.ErrRange):
				return fmt.Errorf("--fusion %s: want bucket counts from 1 to %d", strings.TrimSpace(f), bench.MaxBuckets)
			case err != nil:
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

// parseLinks reads --link-bw into p: one link (a value, a preset or auto),
// or with --topology "intra=X,inter=Y", the links inside and between
// servers (inter may not be auto: this machine has one kind of link).
func parseLinks(p *bench.Plan, s string) error {
	if !strings.Contains(s, "=") {
		var err error
		p.LinkGBps, p.LinkSource, err = parseLink(s)
		return err
	}
	var intra, inter string
	for _, part := range strings.Split(s, ",") {
		key, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "intra":
			intra = strings.TrimSpace(val)
		case "inter":
			inter = strings.TrimSpace(val)
		default:
			return fmt.Errorf("%q: want intra=X,inter=Y (a value, a preset or auto for intra)", s)
		}
	}
	if intra == "" || inter == "" {
		return fmt.Errorf("%q: give both intra= and inter=", s)
	}
	var err error
	if p.LinkGBps, p.LinkSource, err = parseLink(intra); err != nil {
		return fmt.Errorf("intra: %w", err)
	}
	if strings.EqualFold(inter, bench.LinkAuto) {
		return fmt.Errorf("inter=auto: the link between servers cannot be measured from one of them; give a value or a preset")
	}
	if p.LinkInterGBps, p.LinkInterSource, err = parseLink(inter); err != nil {
		return fmt.Errorf("inter: %w", err)
	}
	return nil
}
