// Package sim is the simulating backend (--backend sim): every rank is a
// goroutine of this process, as with shm, and messages are really matched
// and copied, so every collective's result is checked as on any backend;
// but every rank also keeps a virtual clock (backends.Clock), and the
// harness times rows by it. Times are what the links of a
// backends.LinkModel would take, not what this machine takes.
//
// The time model. Every rank's clock starts at 0 and moves only when one
// of its requests completes (Wait). Rank r sits on server r/PerServer.
// Every rank has two egress ports, one for messages to ranks of its own
// server (latency IntraAlpha, bandwidth IntraGBps) and one for messages to
// other servers (InterAlpha, InterGBps), each busy until some time. A send
// of s bytes posted when the sender's clock reads t on a port with latency
// alpha and bandwidth bw:
//
//	start = max(t, port.busy)     // it queues behind what the port is sending
//	port.busy = start + s/bw
//	arrive = start + s/bw + alpha
//
// Its Wait advances the sender's clock to max(clock, start + s/bw) (the
// data has left); the Wait of the matching receive advances the
// receiver's clock to max(clock, arrive), plus s/ReduceGBps for a
// RecvReduce. A zero-length message costs alpha. Messages take a port in
// the order the sending rank posts them, its program order, so the clocks
// come out the same in every run, whatever the goroutines' interleaving.
//
// Not modelled: local work inside algorithms (copies between a rank's own
// buffers, Avg's division, the harness's bookkeeping) takes no virtual
// time; contention at the receiver (many senders into one rank arrive in
// parallel, each at its own link's speed), and any topology beyond two
// levels, are not simulated; a rank's two ports work independently and
// in parallel with its receiving.
package sim

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/agree"
)

// Name is the name the backend is registered under.
const Name = "sim"

func init() { backends.Register(Backend{}) }

// Backend starts worlds whose ranks are goroutines of this process running
// in virtual time.
type Backend struct{}

// Name implements backends.Backend.
func (Backend) Name() string { return Name }

// Run implements backends.Backend: it hosts every rank of the world, on
// cfg.Links (nil: backends.DefaultLinkModel).
func (Backend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	var links backends.LinkModel
	if cfg.Links != nil {
		links = *cfg.Links
	}
	w, err := NewWorld(cfg.Ranks, links)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	errs := make([]error, cfg.Ranks) // every rank's own ending, for a hang report
	for r := range cfg.Ranks {
		t := w.Endpoint(r)
		g.Go(func() error {
			defer t.Close()
			err := body(gctx, t)
			errs[r] = err
			if err != nil {
				// Ranks agreeing on a call (--retry) stop waiting for it.
				w.hub.Lose(r, err)
			}
			if err != nil && errors.Is(err, context.Canceled) && ctx.Err() == nil {
				// Another rank failed first; its error is the one to report.
				return nil
			}
			return err
		})
	}
	first := g.Wait()
	if !errors.Is(first, backends.ErrTimeout) {
		return first
	}
	// An op timed out: report where every rank was, after the first error.
	all := []error{first}
	for r, err := range errs {
		switch {
		case err == nil:
			all = append(all, fmt.Errorf("rank %d had finished", r))
		case err != first:
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}

// World is a set of ranks that exchange messages in memory, in virtual
// time.
type World struct {
	size  int
	links backends.LinkModel // with defaults filled in
	// queues[src][dst] carries the messages from src to dst, made when
	// first used (most algorithms use few of the n^2 pairs).
	queues [][]atomic.Pointer[queue]
	eps    []*endpoint
	// hub and watchers carry the ranks' agreement on how a call ended
	// (backends.Recoverer).
	hub      *agree.Hub
	watchers []agree.Watcher
}

// NewWorld returns a world of size ranks on links (zero fields take
// backends.DefaultLinkModel's values). Its endpoints are independent of
// any Backend.Run, which lets tests drive ranks directly.
func NewWorld(size int, links backends.LinkModel) (*World, error) {
	if size < 1 {
		return nil, fmt.Errorf("sim: ranks must be at least 1, got %d", size)
	}
	if err := links.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	w := &World{size: size, links: links.WithDefaults(), queues: make([][]atomic.Pointer[queue], size),
		eps: make([]*endpoint, size), watchers: make([]agree.Watcher, size)}
	w.hub = agree.NewHub(size, w.relay)
	for r := range size {
		w.queues[r] = make([]atomic.Pointer[queue], size)
		w.eps[r] = &endpoint{w: w, rank: r}
	}
	return w, nil
}

// Links returns the world's link model, defaults filled in.
func (w *World) Links() backends.LinkModel { return w.links }

// queue returns the queue from src to dst, making it on first use.
func (w *World) queue(src, dst int) *queue {
	p := &w.queues[src][dst]
	if q := p.Load(); q != nil {
		return q
	}
	p.CompareAndSwap(nil, newQueue())
	return p.Load()
}

// server returns the server rank r sits on.
func (w *World) server(r int) int {
	if w.links.PerServer <= 0 {
		return 0
	}
	return r / w.links.PerServer
}

// Endpoint returns the Transport of one rank, the same one on every call:
// it holds the rank's clock. Each rank's endpoint must be used by one
// goroutine at a time.
func (w *World) Endpoint(rank int) backends.Transport { return w.eps[rank] }

// endpoint is one rank of a World.
type endpoint struct {
	w      *World
	rank   int
	closed bool
	call   backends.Call // the current call (BeginCall), carried by every request
	// clock is the rank's virtual time in nanoseconds. Only the rank's
	// goroutine moves it; it is atomic so that others may read it.
	clock atomic.Int64
	// waited is the part of clock spent waiting for messages to arrive
	// (backends.WaitClock), in nanoseconds, moved and read as clock is.
	waited atomic.Int64
	// busy is when each egress port (0: inside the server, 1: between
	// servers) has sent everything posted on it so far.
	busy [2]time.Duration
}

// BeginCall implements backends.CallTagger: requests posted from now on
// belong to call c, and a receive matched with a send of another call
// fails both with ErrMismatch, naming both sides.
func (e *endpoint) BeginCall(c backends.Call) { e.call = c }

// Rank implements backends.Transport.
func (e *endpoint) Rank() int { return e.rank }

// Size implements backends.Transport.
func (e *endpoint) Size() int { return e.w.size }

// Close implements backends.Transport.
func (e *endpoint) Close() error {
	e.closed = true
	return nil
}

// Now implements backends.Clock: the rank's virtual time.
func (e *endpoint) Now() time.Duration { return time.Duration(e.clock.Load()) }

// Waited implements backends.WaitClock: the virtual time this rank spent
// waiting for messages to arrive. The rest of its time is its own work:
// sending (waiting for its port to pass the data on) and reducing.
func (e *endpoint) Waited() time.Duration { return time.Duration(e.waited.Load()) }

// advance moves the rank's clock forward to t, if it is behind.
func (e *endpoint) advance(t time.Duration) {
	if t > e.Now() {
		e.clock.Store(int64(t))
	}
}

// check reports why this endpoint cannot message peer, if it cannot.
func (e *endpoint) check(peer int) error {
	switch {
	case e.closed:
		return backends.ErrClosed
	case peer < 0 || peer >= e.w.size:
		return fmt.Errorf("peer %d out of range [0, %d)", peer, e.w.size)
	case peer == e.rank:
		return fmt.Errorf("rank %d cannot message itself", peer)
	}
	return nil
}
