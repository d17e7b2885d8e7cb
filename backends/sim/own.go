package sim

import (
	"math"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/fielderr"
)

// Own are the sim backend's own options as its flags give them
// (DefineFlags) and the harness holds them (backends.Settings.Own):
// everything of the link model but the links' bandwidths and servers,
// which are the harness's (backends.Settings.Links), and whether the run
// carries no payload. Zero fields take DefaultLinkModel's values.
type Own struct {
	// Alpha and InterAlpha are the latencies of a link inside a server
	// and between servers (--sim-alpha).
	Alpha, InterAlpha time.Duration
	// ReduceGBps and CopyGBps are the rates at which a rank reduces and
	// copies between its own buffers, in GB/s (--sim-reduce, --sim-copy).
	ReduceGBps, CopyGBps float64
	// Gap is the least time between two messages a rank sends (--sim-gap).
	Gap time.Duration
	// Pull makes receivers move the data (--sim-pull; LinkModel.Pull).
	Pull bool
	// NoPayload runs the measured ops with lengths only (--sim-data=false),
	// which the harness runs (backends.PayloadOption).
	NoPayload bool
}

// WithoutPayload implements backends.PayloadOption.
func (o Own) WithoutPayload() bool { return o.NoPayload }

// CheckOwn implements backends.OwnChecker: o means something on sim alone,
// and there its figures are not negative nor NaN, and a latency between
// servers needs more than one (l.PerServer). Its errors are
// fielderr.FieldErrors naming o's fields.
func (o Own) CheckOwn(b backends.Backend, l backends.WorldLinks) error {
	if _, ok := b.(Backend); !ok {
		switch {
		case o.Alpha != 0 || o.InterAlpha != 0:
			return fielderr.FieldErrorf("Alpha", ": only %s sim simulates links", fielderr.Field("Backend"))
		case o.ReduceGBps != 0:
			return fielderr.FieldErrorf("ReduceGBps", ": only %s sim simulates reductions", fielderr.Field("Backend"))
		case o.CopyGBps != 0:
			return fielderr.FieldErrorf("CopyGBps", ": only %s sim simulates copies", fielderr.Field("Backend"))
		case o.Gap != 0:
			return fielderr.FieldErrorf("Gap", ": only %s sim simulates links", fielderr.Field("Backend"))
		case o.Pull:
			return fielderr.FieldErrorf("Pull", ": only %s sim simulates links", fielderr.Field("Backend"))
		case o.NoPayload:
			return fielderr.FieldErrorf("NoPayload", ": only %s sim can run without payload", fielderr.Field("Backend"))
		}
		return nil
	}
	badRate := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case o.Alpha < 0 || o.InterAlpha < 0:
		return fielderr.FieldErrorf("Alpha", " intra=%v,inter=%v: must not be negative", o.Alpha, o.InterAlpha)
	case o.Gap < 0:
		return fielderr.FieldErrorf("Gap", " %v: must not be negative", o.Gap)
	case badRate(o.ReduceGBps):
		return fielderr.FieldErrorf("ReduceGBps", " %v: must be a positive bandwidth", o.ReduceGBps)
	case badRate(o.CopyGBps):
		return fielderr.FieldErrorf("CopyGBps", " %v: must be a positive bandwidth", o.CopyGBps)
	case o.InterAlpha > 0 && l.PerServer <= 0:
		return fielderr.FieldErrorf("InterAlpha", ": a link between servers needs %s with more than one server", fielderr.Field("Topology"))
	}
	return nil
}

// settingsLinks returns the link model the world's settings s ask for: s.Own's
// latencies, rates and Pull (an Own or *Own) with s.Links' bandwidths and
// servers; a LinkModel or *LinkModel in s.Own is taken whole (a harness
// or test that builds the model itself); zero fields are left for
// WithDefaults.
func settingsLinks(s backends.Settings) LinkModel {
	var o Own
	switch v := s.Own.(type) {
	case Own:
		o = v
	case *Own:
		if v != nil {
			o = *v
		}
	case LinkModel, *LinkModel:
		return ownLinks(v)
	}
	return LinkModel{
		PerServer:  s.Links.PerServer,
		IntraAlpha: o.Alpha, InterAlpha: o.InterAlpha,
		IntraGBps: s.Links.IntraGBps, InterGBps: s.Links.InterGBps, ReduceGBps: o.ReduceGBps, CopyGBps: o.CopyGBps,
		Gap: o.Gap, Pull: o.Pull,
	}
}
