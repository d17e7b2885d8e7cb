package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/listarg"
	"github.com/hccl-test/hccl-test/world"
)

// parseDomains reads --groups (already in p.LayoutText), --group, --fusion
// and --overlap into p. Checks that need the whole plan are left to
// Plan.Validate.
func parseDomains(p *bench.Plan, groups, fusion, overlap string) error {
	if p.LayoutText != "" {
		l, err := world.ParseLayout(p.LayoutText, p.Ranks)
		if err != nil {
			return err
		}
		p.Layout = l
	}
	if groups != "" {
		var err error
		lower := func(g string) (string, error) { return strings.ToLower(g), nil }
		if p.Groups, err = listarg.Parse("--group", groups, ",", lower); err != nil {
			return err
		}
	}
	if fusion != "" {
		var err error
		bucket := func(f string) (int, error) {
			n, err := limits.Count(f)
			switch {
			case errors.Is(err, limits.ErrRange):
				return 0, fmt.Errorf("%s: want bucket counts from 1 to %d", strings.TrimSpace(f), bench.MaxBuckets)
			case err != nil:
				return 0, fmt.Errorf("%q is not a bucket count", f)
			}
			return n, nil
		}
		if p.Fusion, err = listarg.Parse("--fusion", fusion, ",", bucket); err != nil {
			return err
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

// parseLinks reads --link-bw into l: one link (a value, a preset or auto),
// or with --topology "intra=X,inter=Y", the links inside and between
// servers (inter may not be auto: this machine has one kind of link).
func parseLinks(l *bench.Links, s string) error {
	if !strings.Contains(s, "=") {
		var err error
		l.LinkGBps, l.LinkSource, err = parseLink(s)
		return linkErr(err)
	}
	var intra, inter string
	keys, vals, err := listarg.Keys("--link-bw", s, ",", "=", strings.ToLower)
	if err != nil {
		return err
	}
	for i, key := range keys {
		switch key {
		case "intra":
			intra = vals[i]
		case "inter":
			inter = vals[i]
		default:
			return linkErr(fmt.Errorf("%q: want intra=X,inter=Y (a value, a preset or auto for intra)", s))
		}
	}
	if intra == "" || inter == "" {
		return linkErr(fmt.Errorf("%q: give both intra= and inter=", s))
	}
	if l.LinkGBps, l.LinkSource, err = parseLink(intra); err != nil {
		return linkErr(fmt.Errorf("intra: %w", err))
	}
	if strings.EqualFold(inter, bench.LinkAuto) {
		return linkErr(fmt.Errorf("inter=auto: the link between servers cannot be measured from one of them; give a value or a preset"))
	}
	if l.LinkInterGBps, l.LinkInterSource, err = parseLink(inter); err != nil {
		return linkErr(fmt.Errorf("inter: %w", err))
	}
	return nil
}

// linkErr names --link-bw in an error of parseLinks; nil stays nil.
func linkErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("--link-bw: %w", err)
}
