package sim

import (
	"fmt"
	"math"
	"time"
)

// LinkModel describes simulated links: ranks numbered server by server,
// PerServer to a server (0, or at least the world's size: one server), and
// per direction of every link a latency (alpha) and a bandwidth, inside a
// server (Intra) and between servers (Inter), plus the rates at which a
// rank reduces (what it receives, or its own buffers) and copies between
// its own buffers, and the gap between two messages a rank sends. Zero
// fields take DefaultLinkModel's values (WithDefaults), except InterGBps,
// which then equals IntraGBps, CopyGBps, 1.5 times ReduceGBps, and Gap,
// half of IntraAlpha.
type LinkModel struct {
	PerServer              int
	IntraAlpha, InterAlpha time.Duration
	// Gap is the least time between the starts of two messages a rank
	// sends (LogP's g): a rank that posts several at once hands one to
	// its ports every Gap, as real ones spend time on each.
	Gap time.Duration
	// IntraGBps, InterGBps, ReduceGBps and CopyGBps are in GB/s (1e9 bytes
	// per second).
	IntraGBps, InterGBps, ReduceGBps, CopyGBps float64
	// Pull makes receivers move the data, as on shared memory: a message
	// costs its receiver its bytes at the link's rate (reduced on the way
	// at the slower of that and the reduction's rate), one message after
	// another, and its sender's send ends when the receiver has taken it.
	// Otherwise the sender's port moves it while both ranks go on.
	Pull bool
}

// DefaultLinkModel is what a simulated world has where its LinkModel (or
// Options.Links) says nothing: one server, 2 us and 25 GB/s per message
// inside it, 10 us between servers (at the intra bandwidth unless given),
// reductions at 10 GB/s, copies between a rank's own buffers at 1.5 times
// the reduction rate (a copy moves two thirds of a reduction's bytes: the
// rule of coll's cost model), and a gap between a rank's messages of half
// the latency inside a server (what coll's cost model charges for each
// further message of a step).
var DefaultLinkModel = LinkModel{
	IntraAlpha: 2 * time.Microsecond, InterAlpha: 10 * time.Microsecond,
	IntraGBps: 25, ReduceGBps: 10,
}

// WithDefaults returns m with its zero fields taken from DefaultLinkModel,
// a zero InterGBps set to IntraGBps, a zero CopyGBps to 1.5 times
// ReduceGBps and a zero Gap to half of IntraAlpha.
func (m LinkModel) WithDefaults() LinkModel {
	d := DefaultLinkModel
	if m.IntraAlpha == 0 {
		m.IntraAlpha = d.IntraAlpha
	}
	if m.InterAlpha == 0 {
		m.InterAlpha = d.InterAlpha
	}
	if m.IntraGBps == 0 {
		m.IntraGBps = d.IntraGBps
	}
	if m.InterGBps == 0 {
		m.InterGBps = m.IntraGBps
	}
	if m.ReduceGBps == 0 {
		m.ReduceGBps = d.ReduceGBps
	}
	if m.CopyGBps == 0 {
		m.CopyGBps = 1.5 * m.ReduceGBps
	}
	if m.Gap == 0 {
		m.Gap = m.IntraAlpha / 2
	}
	return m
}

// Validate reports what is wrong with m, if anything; zero fields are
// fine (they take the defaults).
func (m LinkModel) Validate() error {
	bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case m.PerServer < 0:
		return fmt.Errorf("link model: %d ranks per server", m.PerServer)
	case m.IntraAlpha < 0 || m.InterAlpha < 0:
		return fmt.Errorf("link model: negative latency (intra %v, inter %v)", m.IntraAlpha, m.InterAlpha)
	case m.Gap < 0:
		return fmt.Errorf("link model: negative gap %v", m.Gap)
	case bad(m.IntraGBps) || bad(m.InterGBps) || bad(m.ReduceGBps) || bad(m.CopyGBps):
		return fmt.Errorf("link model: bandwidths must be finite and positive (intra %v, inter %v, reduce %v, copy %v GB/s)",
			m.IntraGBps, m.InterGBps, m.ReduceGBps, m.CopyGBps)
	}
	return nil
}

// Servers returns how many servers a world of n ranks spans under m.
func (m LinkModel) Servers(n int) int {
	if m.PerServer <= 0 || m.PerServer >= n {
		return 1
	}
	return (n + m.PerServer - 1) / m.PerServer
}

// Describe says what m simulates for a world of n ranks, for a header:
// "2 servers x 4 ranks, intra 56 GB/s + 2 us, inter 25 GB/s + 10 us,
// gap 1 us, reduce 10 GB/s, copy 15 GB/s". Zero fields are described as their
// defaults.
func (m LinkModel) Describe(n int) string {
	m = m.WithDefaults()
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	servers := m.Servers(n)
	work := fmt.Sprintf("gap %g us, reduce %g GB/s, copy %g GB/s", us(m.Gap), m.ReduceGBps, m.CopyGBps)
	if m.Pull {
		work += ", receivers pull"
	}
	if servers == 1 {
		return fmt.Sprintf("1 server x %d ranks, links %g GB/s + %g us, %s", n, m.IntraGBps, us(m.IntraAlpha), work)
	}
	shape := fmt.Sprintf("%d servers x %d ranks", servers, m.PerServer)
	if n%m.PerServer != 0 {
		shape = fmt.Sprintf("%d ranks on %d servers of %d", n, servers, m.PerServer)
	}
	return fmt.Sprintf("%s, intra %g GB/s + %g us, inter %g GB/s + %g us, %s",
		shape, m.IntraGBps, us(m.IntraAlpha), m.InterGBps, us(m.InterAlpha), work)
}
