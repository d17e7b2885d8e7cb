package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/listarg"
	"github.com/hccl-test/hccl-test/units"

	"github.com/hccl-test/hccl-test/backends/sim" // registers --backend sim
)

// simFlags are the flags of the simulating backend (--backend sim): the
// links' latencies, the reduction and copy rates, the gap between a rank's
// messages, who moves the data, and whether messages carry data.
// The links' bandwidths and the servers come from --link-bw and
// --topology.
type simFlags struct {
	alpha, reduce, copy, gap *string
	data, pull               *bool
}

// addSimFlags defines --sim-alpha, --sim-reduce, --sim-copy, --sim-gap,
// --sim-pull and --sim-data on fs, in that order.
func addSimFlags(fs *pflag.FlagSet) simFlags {
	d := sim.DefaultLinkModel
	var f simFlags
	f.alpha = fs.String("sim-alpha", "", fmt.Sprintf("latency of a simulated message (--backend sim): intra=DUR,inter=DUR for the links inside and between servers, or one DUR for inside (default intra=%gus,inter=%gus)",
		d.IntraAlpha.Seconds()*1e6, d.InterAlpha.Seconds()*1e6))
	arg(fs, "sim-alpha", "DURATION|SPEC")
	f.reduce = fs.String("sim-reduce", "", fmt.Sprintf("rate at which a simulated rank reduces what it receives, or its own buffers (--backend sim) (default %gGB/s)", d.ReduceGBps))
	arg(fs, "sim-reduce", "RATE")
	f.copy = fs.String("sim-copy", "", "rate at which a simulated rank copies between its own buffers (--backend sim) (default 1.5 times --sim-reduce: a copy moves two thirds of a reduction's bytes)")
	arg(fs, "sim-copy", "RATE")
	f.gap = fs.String("sim-gap", "", "least time between two messages a simulated rank sends (LogP's gap; --backend sim): one that posts k at once hands them out over (k-1) gaps (default half the latency inside a server, what --algo auto charges for each further message)")
	arg(fs, "sim-gap", "DURATION")
	f.pull = fs.Bool("sim-pull", false, "--backend sim: receivers move the data, as on shared memory: a message costs its receiver its bytes (reduced on the way, at the slower rate), one after another, and its sender waits until it is taken; by default the sender's port moves it while both ranks go on, as a network adapter does")
	f.data = fs.Bool("sim-data", true, "--backend sim: false runs the measured ops without payload: no buffer takes memory and nothing is copied or reduced, so worlds far larger than this machine run; times are the same (the links time messages by their lengths), results are not checked")
	arg(fs, "sim-data", "=false")
	return f
}

// apply reads the flags into l, the links of a world on a backend of
// capabilities caps (the zero Caps for an unknown one, which is refused
// later, by name), and on sim makes --link-bw auto the simulated link
// inside a server (there is nothing to measure: the link is what the model
// says). Call it once --link-bw is
// read; Plan.Validate (or Links.SimLinkModel) checks the rest. A run
// without payload (l.NoPayload) has nothing to check.
func (f simFlags) apply(l *bench.Links, caps backends.Caps) error {
	if *f.alpha != "" {
		if err := parseSimAlpha(l, *f.alpha); err != nil {
			return err
		}
	}
	if *f.reduce != "" {
		gbps, err := units.ParseBandwidth(*f.reduce)
		if err != nil {
			return fmt.Errorf("--sim-reduce: %w", err)
		}
		l.SimReduceGBps = gbps
	}
	if *f.gap != "" {
		d, err := positiveDuration(*f.gap)
		if err != nil {
			return fmt.Errorf("--sim-gap %q: %w", *f.gap, err)
		}
		l.SimGap = d
	}
	if *f.copy != "" {
		gbps, err := units.ParseBandwidth(*f.copy)
		if err != nil {
			return fmt.Errorf("--sim-copy: %w", err)
		}
		l.SimCopyGBps = gbps
	}
	l.SimPull = *f.pull
	if !*f.data {
		if !caps.NoPayload {
			return fmt.Errorf("--sim-data=false: only --backend sim can run without payload")
		}
		l.NoPayload = true
	}
	if caps.Simulated && l.LinkSource == bench.LinkAuto {
		l.LinkGBps = sim.DefaultLinkModel.IntraGBps
		l.LinkSource = "auto on sim: the simulated link inside a server, by default"
	}
	return nil
}

// parseSimAlpha reads "intra=DUR,inter=DUR", either part alone, or one DUR
// (inside a server) into l. Its errors name --sim-alpha.
func parseSimAlpha(l *bench.Links, s string) error {
	bad := func(err error) error { return fmt.Errorf("--sim-alpha %q: %w", s, err) }
	if !strings.Contains(s, "=") {
		d, err := positiveDuration(s)
		if err != nil {
			return bad(err)
		}
		l.SimAlpha = d
		return nil
	}
	keys, vals, err := listarg.Keys("--sim-alpha", s, ",", "=", strings.ToLower)
	if err != nil {
		return err
	}
	for i, key := range keys {
		d, err := positiveDuration(vals[i])
		if err != nil {
			return bad(err)
		}
		switch key {
		case "intra":
			l.SimAlpha = d
		case "inter":
			l.SimInterAlpha = d
		default:
			return bad(fmt.Errorf("unknown key %q (want intra=DUR,inter=DUR, or one DUR)", key))
		}
	}
	return nil
}

// positiveDuration parses a latency such as 2us or 1.5us, more than 0 and
// at most limits.MaxDuration.
func positiveDuration(s string) (time.Duration, error) {
	return limits.Duration(s, limits.GoDuration, 1)
}
