package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/internal/flagdoc"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/listarg"
	"github.com/hccl-test/hccl-test/units"
)

// DefineFlags implements backends.FlagDefiner: --sim-alpha, --sim-reduce,
// --sim-copy, --sim-gap, --sim-pull and --sim-data, in that order: the
// links' latencies, the reduction and copy rates, the gap between a rank's
// messages, who moves the data, and whether messages carry data. The
// links' bandwidths and the servers are the harness's (--link-bw and
// --topology, backends.Settings.Links). The function it returns reads them
// into an Own, refusing a value that is not one; what needs the world
// (Own.CheckOwn) is checked with the plan.
func (Backend) DefineFlags(fs *pflag.FlagSet) func() (any, error) {
	d := DefaultLinkModel
	alpha := fs.String("sim-alpha", "", fmt.Sprintf("latency of a simulated message (--backend sim): intra=DUR,inter=DUR for the links inside and between servers, or one DUR for inside (default intra=%gus,inter=%gus)",
		d.IntraAlpha.Seconds()*1e6, d.InterAlpha.Seconds()*1e6))
	flagdoc.Arg(fs, "sim-alpha", "DURATION|SPEC")
	reduce := fs.String("sim-reduce", "", fmt.Sprintf("rate at which a simulated rank reduces what it receives, or its own buffers (--backend sim) (default %gGB/s)", d.ReduceGBps))
	flagdoc.Arg(fs, "sim-reduce", "RATE")
	cp := fs.String("sim-copy", "", "rate at which a simulated rank copies between its own buffers (--backend sim) (default 1.5 times --sim-reduce: a copy moves two thirds of a reduction's bytes)")
	flagdoc.Arg(fs, "sim-copy", "RATE")
	gap := fs.String("sim-gap", "", "least time between two messages a simulated rank sends (LogP's gap; --backend sim): one that posts k at once hands them out over (k-1) gaps (default half the latency inside a server, what --algo auto charges for each further message)")
	flagdoc.Arg(fs, "sim-gap", "DURATION")
	pull := fs.Bool("sim-pull", false, "--backend sim: receivers move the data, as on shared memory: a message costs its receiver its bytes (reduced on the way, at the slower rate), one after another, and its sender waits until it is taken; by default the sender's port moves it while both ranks go on, as a network adapter does")
	data := fs.Bool("sim-data", true, "--backend sim: false runs the measured ops without payload: no buffer takes memory and nothing is copied or reduced, so worlds far larger than this machine run; times are the same (the links time messages by their lengths), results are not checked")
	flagdoc.Arg(fs, "sim-data", "=false")
	for _, o := range []struct{ flag, value, why string }{
		{"sim-alpha", "", "simulates links"}, {"sim-reduce", "", "simulates reductions"},
		{"sim-copy", "", "simulates copies"}, {"sim-gap", "", "simulates links"},
		{"sim-pull", "", "simulates links"}, {"sim-data", "false", "can run without payload"},
	} {
		flagdoc.Only(fs, o.flag, o.value, o.why)
	}
	for _, s := range []struct{ flag, field, shown string }{
		{"sim-alpha", "Alpha", ""}, {"sim-alpha", "InterAlpha", "--sim-alpha inter="},
		{"sim-reduce", "ReduceGBps", ""}, {"sim-copy", "CopyGBps", ""}, {"sim-gap", "Gap", ""},
		{"sim-pull", "Pull", ""}, {"sim-data", "NoPayload", "--sim-data=false"},
	} {
		flagdoc.Sets(fs, s.flag, s.field, s.shown)
	}
	return func() (any, error) {
		var o Own
		if *alpha != "" {
			if err := parseAlpha(&o, *alpha); err != nil {
				return nil, err
			}
		}
		if *reduce != "" {
			gbps, err := units.ParseBandwidth(*reduce)
			if err != nil {
				return nil, fmt.Errorf("--sim-reduce: %w", err)
			}
			o.ReduceGBps = gbps
		}
		if *gap != "" {
			d, err := positiveDuration(*gap)
			if err != nil {
				return nil, fmt.Errorf("--sim-gap %q: %w", *gap, err)
			}
			o.Gap = d
		}
		if *cp != "" {
			gbps, err := units.ParseBandwidth(*cp)
			if err != nil {
				return nil, fmt.Errorf("--sim-copy: %w", err)
			}
			o.CopyGBps = gbps
		}
		o.Pull, o.NoPayload = *pull, !*data
		return o, nil
	}
}

// parseAlpha reads "intra=DUR,inter=DUR", either part alone, or one DUR
// (inside a server) into o. Its errors name --sim-alpha.
func parseAlpha(o *Own, s string) error {
	bad := func(err error) error { return fmt.Errorf("--sim-alpha %q: %w", s, err) }
	if !strings.Contains(s, "=") {
		d, err := positiveDuration(s)
		if err != nil {
			return bad(err)
		}
		o.Alpha = d
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
			o.Alpha = d
		case "inter":
			o.InterAlpha = d
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
