// Package sim is the simulating backend (--backend sim): every rank is a
// goroutine of this process, as with shm, and messages are really matched
// and copied, so every collective's result is checked as on any backend;
// but every rank also keeps a virtual clock (backends.Clock), and the
// harness times rows by it. Times are what the links of a
// LinkModel would take, not what this machine takes.
//
// The time model. Every rank's clock starts at 0 and moves only when one
// of its requests completes (Wait). Rank r sits on server r/PerServer.
// Every rank has two egress ports, one for messages to ranks of its own
// server (latency IntraAlpha, bandwidth IntraGBps) and one for messages to
// other servers (InterAlpha, InterGBps), each busy until some time. A send
// of s bytes posted when the sender's clock reads t on a port with latency
// alpha and bandwidth bw:
//
//	issued = max(t, issue)        // a gap after the rank's previous message
//	issue = issued + Gap
//	start = max(issued, port.busy) // it queues behind what the port is sending
//	port.busy = start + s/bw
//	arrive = start + s/bw + alpha
//
// So a rank that posts k messages at once hands them to its ports Gap
// apart (LogP's g), as real ranks spend time on each; one message per
// step, as most algorithms send, never waits for it when Gap is at most
// alpha.
// Every rank also has two ingress ports, one per level, with that
// level's bandwidth, each with an account: when it would have taken every
// byte the rank received on it since its ports were last free (Align),
// moved back to back. The receiver's Wait books the message there, in the
// rank's program order:
//
//	in.account += s/bw
//	arrive = max(arrive, in.account + alpha)
//
// so k senders into one rank take k messages' time on its port, and one
// sender per receiver takes one message's.
// Its Wait advances the sender's clock to max(clock, start + s/bw) (the
// data has left); the Wait of the matching receive advances the
// receiver's clock to max(clock, arrive), plus s/ReduceGBps for a
// RecvReduce. A zero-length message costs alpha. Messages take a port in
// the order the sending rank posts them, its program order, so the clocks
// come out the same in every run, whatever the goroutines' interleaving.
//
// A rank's own work inside algorithms (backends.LocalWorker) takes its
// time too: a copy of s bytes between its buffers s/CopyGBps, a reduction
// of its own buffers (or Avg's division) into s bytes s/ReduceGBps. So
// does time the harness says the rank spends apart from its messages
// (backends.Holder): a compute phase, or an injected slow rank. An
// injected delay or bandwidth limit holds a message on its port instead
// (backends.LinkHolder): the port is busy that much longer, as on a
// slower link, and the rank goes on.
//
// The harness's own calls (runctl.Ctl: its barrier, gathering and combining)
// meet in memory (backends.Rendezvous, meet.go), not as messages: they
// take no virtual time and cost one pass over the ranks.
//
// Not modelled: the harness's bookkeeping takes no virtual time; an
// ingress port's idle time earlier in a row is credited to a later burst
// (it is an account, not a queue); any topology beyond two levels is not
// simulated; a rank's ports work independently and in parallel with its
// own work.
//
// Calls without payload (backends.Call.NoPayload, which shm honours) move
// no bytes at all; their clocks advance exactly as with payload, since the
// model depends on the messages' lengths only. That is how --sim-data=false
// runs worlds whose buffers would not fit in this machine's memory.
//
// sim wraps shm: shm's world matches, copies and reduces the messages,
// agrees on failed calls and recovers, and sim's endpoint around each
// rank's shm endpoint books every message on its ports and moves the
// clocks.
package sim

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/pairtab"
)

// Name is the name the backend is registered under.
const Name = "sim"

func init() { backends.Register(Backend{}) }

// Backend starts worlds whose ranks are goroutines of this process running
// in virtual time.
type Backend struct{}

// Name implements backends.Backend.
func (Backend) Name() string { return Name }

// Capabilities implements backends.Backend: ranks are goroutines of this
// process, in virtual time, and calls may carry no payload; failed calls
// can be run again (shm's agreement); worlds go up to MaxRanks. Receivers
// do not read senders' buffers as far as --algo auto is concerned (see
// shmEndpoint).
func (Backend) Capabilities() backends.Caps {
	return backends.Caps{Simulated: true, NoPayload: true, InProcess: true, Recovers: true, MaxRanks: MaxRanks}
}

// MaxRanks is the largest simulated world: every structure of a world
// grows linearly with its ranks (a rank's goroutine and its state, and
// the pairs of ranks that exchange messages), so that clusters of tens of
// thousands of ranks simulate in seconds without payload.
const MaxRanks = 1 << 16

// Run implements backends.Backend: shm hosts every rank of the world, each
// in virtual time on the links of cfg's Options (nil: DefaultLinkModel).
func (Backend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	o, err := options(cfg)
	if err != nil {
		return err
	}
	f, err := newFabric(cfg.Ranks, o.Links)
	if err != nil {
		return err
	}
	cfg.Options = nil // shm has none
	return shm.Backend{}.Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		return body(ctx, f.wrap(t))
	})
}

// World is a set of ranks that exchange messages in memory, in virtual
// time.
type World struct {
	f   *fabric
	eps []*endpoint
}

// NewWorld returns a world of size ranks on links (zero fields take
// DefaultLinkModel's values). Its endpoints are independent of
// any Backend.Run, which lets tests drive ranks directly.
func NewWorld(size int, links LinkModel) (*World, error) {
	f, err := newFabric(size, links)
	if err != nil {
		return nil, err
	}
	sw := shm.NewWorld(size)
	w := &World{f: f, eps: make([]*endpoint, size)}
	for r := range size {
		w.eps[r] = f.wrap(sw.Endpoint(r))
	}
	return w, nil
}

// Links returns the world's link model, defaults filled in.
func (w *World) Links() LinkModel { return w.f.links }

// Endpoint returns the Transport of one rank, the same one on every call:
// it holds the rank's clock. Each rank's endpoint must be used by one
// goroutine at a time.
func (w *World) Endpoint(rank int) backends.Transport { return w.eps[rank] }

// fabric is what the ranks of a world share in virtual time: the link
// model, and the timings of the messages between each pair.
type fabric struct {
	size  int
	links LinkModel // with defaults filled in
	// pairs holds the timings of the messages from src to dst for each
	// pair of ranks that exchanged messages, made when first used (most
	// algorithms use few of the n^2 pairs).
	pairs *pairtab.Table[pair]
	// meet is where the ranks meet for the harness's own calls.
	meet *meeting
	// kept is the latest call RunWorld replayed, by its key, used by the
	// rank that combines a meeting alone (replay.go).
	kept struct {
		key any
		w   *records
	}
}

// newFabric returns the fabric of a world of size ranks on links.
func newFabric(size int, links LinkModel) (*fabric, error) {
	if size < 1 {
		return nil, fmt.Errorf("sim: ranks must be at least 1, got %d", size)
	}
	if err := links.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return &fabric{size: size, links: links.WithDefaults(), pairs: pairtab.New(size, newPair), meet: newMeeting(size)}, nil
}

// server returns the server rank r sits on.
func (f *fabric) server(r int) int {
	if f.links.PerServer <= 0 {
		return 0
	}
	return r / f.links.PerServer
}

// shmEndpoint is what sim uses of a rank's shm endpoint. Its
// ReadsSenderBuffer (backends.DirectReader) is left out: --algo auto's
// cost model takes sim's own figures, in which nothing is fused.
type shmEndpoint interface {
	backends.Transport
	backends.CallTagger
	backends.Recoverer
	backends.LinkDropper
	backends.Releaser
}

// wrap returns t, a rank's shm endpoint, running in virtual time on f.
func (f *fabric) wrap(t backends.Transport) *endpoint {
	return &endpoint{shmEndpoint: t.(shmEndpoint), f: f, rank: t.Rank(), pairs: f.pairs.Cache(t.Rank())}
}

// endpoint is one rank of a world in virtual time. shm's endpoint serves
// its calls (BeginCall, Watch and Agree as they are); Send, Recv and
// RecvReduce also book and time the messages.
type endpoint struct {
	shmEndpoint
	f      *fabric
	rank   int
	closed bool
	// pairs are the pairs this rank sends and receives on, as it looked
	// them up.
	pairs pairtab.Cache[pair]
	// clock is the rank's virtual time in nanoseconds. Only the rank's
	// goroutine moves it; it is atomic so that others may read it.
	clock atomic.Int64
	// waited is the part of clock spent waiting for messages to arrive
	// (backends.WaitClock), in nanoseconds, moved and read as clock is.
	waited atomic.Int64
	// busy is when each egress port (0: inside the server, 1: between
	// servers) has sent everything posted on it so far.
	busy [2]time.Duration
	// in is each ingress port's account (0: from the rank's own server,
	// 1: from other servers): when it would have taken every byte the
	// rank received on it since its ports were last free (ingress).
	in [2]time.Duration
	// issue is the earliest time the rank's next message can start: a
	// gap after the one before.
	issue time.Duration
	// freeSends and freeRecvs are requests released for reuse
	// (backends.Releaser), used by the rank's goroutine alone.
	freeSends []*sendReq
	freeRecvs []*recvReq
}

// Close implements backends.Transport.
func (e *endpoint) Close() error {
	if !e.closed {
		e.f.meet.leave(e.rank)
	}
	e.closed = true
	return e.shmEndpoint.Close()
}

// Now implements backends.Clock: the rank's virtual time.
func (e *endpoint) Now() time.Duration { return time.Duration(e.clock.Load()) }

// Waited implements backends.WaitClock: the virtual time this rank spent
// waiting for messages to arrive. The rest of its time is its own work:
// sending (waiting for its port to pass the data on) and reducing.
func (e *endpoint) Waited() time.Duration { return time.Duration(e.waited.Load()) }

// advanceBy moves the rank's clock d forward, saturating rather than
// wrapping.
func (e *endpoint) advanceBy(d time.Duration) { e.advance(limits.AddDurations(e.Now(), d)) }

// advance moves the rank's clock forward to t, if it is behind, and no
// further than backends.ClockLimit: there the clock stops, and the call
// that took it there fails (coll checks after every call).
func (e *endpoint) advance(t time.Duration) {
	t = min(t, backends.ClockLimit)
	if t > e.Now() {
		e.clock.Store(int64(t))
	}
}

// Align implements backends.Aligner: the rank's clock reads t (within
// 0 and backends.ClockLimit), whatever it read, and its ports and its gap
// are free from t on: its next message starts no earlier than t and queues
// behind nothing sent before, and its ingress ports have taken everything
// by t. What it waited so far stays counted.
func (e *endpoint) Align(t time.Duration) {
	t = min(max(t, 0), backends.ClockLimit)
	e.clock.Store(int64(t))
	e.busy = [2]time.Duration{}
	e.in = [2]time.Duration{t, t}
	e.issue = 0
}

// valid reports whether shm takes a message between this rank and peer,
// giving it a place in the pair's order; when not, shm fails it at once.
func (e *endpoint) valid(peer int) bool {
	return !e.closed && peer >= 0 && peer < e.f.size && peer != e.rank
}
