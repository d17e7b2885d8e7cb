// Package clustermodel holds the model of a cluster that `hccl-test fit`
// learns from the logs of its small runs and `hccl-test predict` predicts
// larger worlds with: the latency and bandwidth of each level (inside a
// server, between servers), the reduction rate, what each collective's
// measured curve said, and the span of what was fitted. It is written and
// read as JSON that carries a version; a file of another version, or one
// whose figures make no sense, is refused.
package clustermodel

import (
	"fmt"

	"github.com/hccl-test/hccl-test/coll"
)

// Version is the version of the model file this build writes and the only
// one it reads. It changes when a field is renamed, removed or changes
// meaning.
const Version = 1

// Kind is the model file's "kind": what the file is, for a person who
// opens it.
const Kind = "hccl-test cluster model"

// MaxRanks is the largest world a model predicts: the simulated backend's
// (backends/sim MaxRanks), so that every prediction could be run on it.
const MaxRanks = 1 << 16

// Model is a fitted cluster. Times are in microseconds and rates in GB/s
// (1e9 bytes per second), as the tool prints them.
type Model struct {
	// Version is Version.
	Version int `json:"version"`
	// Kind is Kind.
	Kind string `json:"kind"`
	// Source says whose logs were fitted: the tool and, for hccl-test's
	// own runs, the backend ("nccl-tests", "hccl-test shm").
	Source string `json:"source"`
	// Device is the accelerator the logs name on their rank lines, "" when
	// they name none.
	Device string `json:"device,omitempty"`
	// Intra is the link inside a server; every model has it.
	Intra Level `json:"intra"`
	// Inter is the link between servers; nil when every fitted run was
	// one server, and such a model predicts one server only.
	Inter *Level `json:"inter,omitempty"`
	// ReduceGBps is how fast a rank reduces what it receives.
	ReduceGBps float64 `json:"reduce_GBps"`
	// Fused says that a rank receives and reduces in one pass (it reads
	// its peer's memory, as shm and proc do).
	Fused bool `json:"fused,omitempty"`
	// Cores, when above 0, is the number of CPUs that the ranks of a
	// server share to move their data (hccl-test's own CPU backends): the
	// bandwidths are those of a rank while at most Cores ranks of a server
	// run, and a server of more ranks gives each Cores/ranks of them. 0
	// for devices that move data without slowing each other.
	Cores int `json:"cores,omitempty"`
	// HostGBps, when above 0, is how fast the ranks of a server together
	// write the results of a collective into memory (hccl-test's CPU
	// backends, whose ranks copy through the one memory bus of their
	// host): a call on a server of P ranks takes at least P times the
	// bytes each rank writes (HostBytes) over it, whatever its algorithm.
	// 0 for none (devices, or a fit whose rows did not show one).
	HostGBps float64 `json:"host_GBps,omitempty"`
	// SenderMoves says that a sender's CPU copies each message out (tcp).
	SenderMoves bool `json:"sender_moves,omitempty"`
	// Ops is what was fitted per collective, by name in --op's order.
	Ops []Op `json:"ops"`
	// Fitted is the span of the fitted rows.
	Fitted Span `json:"fitted"`
	// Alternatives are other optima of the fit that the rows cannot tell
	// from the model's figures (Alternative); absent in files written
	// before fit searched from several starts, and where it found none.
	Alternatives []Alternative `json:"alternatives,omitempty"`
}

// Level is the latency and bandwidth of one level of links, and the rows
// they were fitted on.
type Level struct {
	AlphaUS float64 `json:"alpha_us"` // latency of one message, us
	GBps    float64 `json:"bw_GBps"`  // bandwidth of one rank's link, GB/s
	From    string  `json:"from"`     // the rows fitted: how many, which ops and worlds
	// Ports says whose the link between servers is: PortsRank (each rank
	// has one of GBps, as with a NIC a GPU; "" reads so) or PortsServer
	// (the ranks of a server share one of GBps, as with one NIC a host).
	// Only the link between servers has it.
	Ports string `json:"ports,omitempty"`
}

// The values of Level.Ports.
const (
	PortsRank   = "rank"
	PortsServer = "server"
)

// SharedNIC reports whether the ranks of a server share its link between
// servers.
func (l Level) SharedNIC() bool { return l.Ports == PortsServer }

// Op is what one collective's measured curve says.
type Op struct {
	// Name is the collective (coll's name: allreduce, ...).
	Name string `json:"op"`
	// BWScale multiplies every bandwidth (links and reduction; not the
	// link between servers where OneServer or InterBWScale is set) for
	// this collective: 1 when it moves data at the levels' rates, below 1
	// when it reaches less, above 1 when more than the links allow
	// (InNetwork).
	BWScale float64 `json:"bw_scale"`
	// LatScale multiplies every latency for this collective (not the
	// link between servers' where OneServer or InterLatScale is set).
	LatScale float64 `json:"lat_scale"`
	// OneServer says that the collective's scales were fitted on rows of
	// one server only: they say what it reaches on the link inside a
	// server (and in its reduction), nothing of the link between servers,
	// which it then takes at the level's own figures (scale 1).
	OneServer bool `json:"one_server,omitempty"`
	// InterBWScale and InterLatScale, where set (not 0), are the
	// collective's own scales on the link between servers, in place of
	// BWScale and LatScale there: fitted on its rows of several servers
	// with those two held at what its rows of one server gave. A
	// collective that reduces in the switches inside a server (NVLS) does
	// not between them, so one pair of scales for both levels would carry
	// that speed onto the network.
	InterBWScale  float64 `json:"inter_bw_scale,omitempty"`
	InterLatScale float64 `json:"inter_lat_scale,omitempty"`
	// Shape is the algorithm whose cost fitted the curve best among ours
	// (ring, rhd, ...), and Shapes the winner at each fitted world and
	// size band, as "ranks/band:name".
	Shape string `json:"shape"`
	// InNetwork says that the curve moved data faster than the links
	// could on any algorithm of ours: a reduction in the network or the
	// switches (NVLS, SHARP), where the links carry each byte once.
	InNetwork bool `json:"in_network,omitempty"`
	// Note says what the curve showed, in words.
	Note string `json:"note,omitempty"`
	// Rows is the number of measured rows fitted.
	Rows int `json:"rows"`
	// MedianPct and WorstPct are the absolute percentage errors of the
	// fitted rows' times under the model: the in-sample residual.
	MedianPct float64 `json:"median_pct"`
	WorstPct  float64 `json:"worst_pct"`
	// LargeP75Pct is the 75th percentile of the errors of the rows of at
	// least 1 MiB, where the bytes dominate (0 when there is none): the
	// fit's own part of a prediction's band there, robust to a row that
	// a burst of other work slowed.
	LargeP75Pct float64 `json:"large_p75_pct"`
	// GrowthPct is the error added per doubling of the world beyond the
	// fitted ones, in percent: measured by leaving one scale out (fit the
	// other worlds, predict one that lies beyond them); 0 where no world
	// could be left out so (the band's default then applies).
	GrowthPct float64 `json:"growth_pct"`
}

// Span is what the fitted rows covered.
type Span struct {
	Worlds   []World `json:"worlds"`    // every fitted world, smallest first
	MinBytes int64   `json:"min_bytes"` // the smallest fitted size
	MaxBytes int64   `json:"max_bytes"` // the largest fitted size
}

// World is a world of Servers servers of PerServer ranks each.
type World struct {
	Servers   int `json:"servers"`
	PerServer int `json:"per_server"`
}

// Ranks is the world's number of ranks.
func (w World) Ranks() int { return w.Servers * w.PerServer }

// String is "S servers x G ranks".
func (w World) String() string { return fmt.Sprintf("%d x %d", w.Servers, w.PerServer) }

// Op returns the fit of collective name, and whether the model has one.
func (m *Model) Op(name string) (Op, bool) {
	for _, o := range m.Ops {
		if o.Name == name {
			return o, true
		}
	}
	return Op{}, false
}

// Largest returns the largest fitted world, and the most servers of any.
func (m *Model) Largest() (w World, servers int) { return m.Fitted.Largest() }

// Largest returns the span's largest world, and the most servers of any.
func (s Span) Largest() (w World, servers int) {
	for _, x := range s.Worlds {
		if x.Ranks() >= w.Ranks() {
			w = x
		}
		servers = max(servers, x.Servers)
	}
	return w, servers
}

// Coll returns auto's cost model (coll.Model) of this cluster for
// collective o on a world of w: the levels' figures, each bandwidth times
// o's BWScale and each latency times its LatScale, two levels when w has
// several servers, the link between them shared by a server's ranks where
// Inter.Ports says so. Where o has scales of its own for the link between
// servers (InterBWScale), that link takes those; where o's scales were
// fitted on one server only (OneServer), it keeps the level's own
// figures: those rows said nothing of it. Where the ranks share Cores CPUs and a
// server holds more ranks than that, every bandwidth is that share of it.
func (m *Model) Coll(o Op, w World) coll.Model {
	share := 1.0
	if m.Cores > 0 && w.PerServer > m.Cores {
		// More ranks than CPUs: they take turns, each moving data
		// Cores/PerServer of the time (coll's Beta is with every rank busy).
		share = float64(m.Cores) / float64(w.PerServer)
	}
	lat, bw := o.LatScale, o.BWScale*share
	cm := coll.Model{
		Alpha: m.Intra.AlphaUS * 1e-6 * lat, Beta: 1 / (m.Intra.GBps * 1e9 * bw),
		Gamma: 1 / (m.ReduceGBps * 1e9 * bw), Fused: m.Fused, Cores: m.Cores, SenderMoves: m.SenderMoves,
	}
	if w.Servers > 1 && m.Inter != nil {
		switch {
		case o.InterBWScale > 0:
			lat, bw = o.InterLatScale, o.InterBWScale*share
		case o.OneServer:
			lat, bw = 1, share
		}
		cm.PerServer = w.PerServer
		cm.InterAlpha = m.Inter.AlphaUS * 1e-6 * lat
		cm.InterBeta = 1 / (m.Inter.GBps * 1e9 * bw)
		cm.InterShared = m.Inter.SharedNIC()
	}
	return cm
}
