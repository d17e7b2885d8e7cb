// Package shm is the in-process shared-memory backend: every rank is a
// goroutine of this process, and a receiver reads the sender's buffer
// directly, in one pass over memory per hop, with any reduction fused into
// that read. Waiting blocks on channels, never spins, so many ranks share few
// cores well.
package shm

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/agree"
	"github.com/hccl-test/hccl-test/internal/pairtab"
)

// Name is the name the backend is registered under.
const Name = "shm"

func init() { backends.Register(Backend{}) }

// Backend starts worlds whose ranks are goroutines of this process.
type Backend struct{}

// Name implements backends.Backend.
func (Backend) Name() string { return Name }

// Capabilities implements backends.Backend: ranks are goroutines of this
// process, receivers read senders' buffers, and failed calls can be run
// again. Its endpoints honour Call.NoPayload (for sim, which wraps them),
// but it times rows in wall time, which would then time nothing: it does
// not offer NoPayload.
func (Backend) Capabilities() backends.Caps {
	return backends.Caps{InProcess: true, SharedMemory: true, Recovers: true}
}

// Run implements backends.Backend: it hosts every rank of the world. It
// has no options of its own.
func (Backend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Options != nil {
		return backends.OptionsError(Name, cfg.Options, "none")
	}
	w := NewWorld(cfg.Ranks)
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
	var finished, stopped []int // named as ranges: there may be 4096 of them
	for r, err := range errs {
		switch {
		case err == nil:
			finished = append(finished, r)
		case err == first:
		case errors.Is(err, first):
			// The rank saw the group's context end outside a call (as it
			// faulted in buffers, say) and returned the cause, the first
			// error: that is another rank's story, not where this one was.
			stopped = append(stopped, r)
		default:
			all = append(all, err)
		}
	}
	if len(finished) > 0 {
		all = append(all, fmt.Errorf("%s had finished", backends.RankList(finished)))
	}
	if len(stopped) > 0 {
		all = append(all, fmt.Errorf("%s %s outside an op when the first failed", backends.RankList(stopped), stoppedVerb(len(stopped))))
	}
	return errors.Join(all...)
}

// stoppedVerb is "was stopped" for one rank and "were stopped" for more.
func stoppedVerb(n int) string {
	if n == 1 {
		return "was stopped"
	}
	return "were stopped"
}

// World is a set of ranks that exchange messages in memory.
type World struct {
	size int
	// spin lets a waiting rank poll for a while before it parks: only when
	// every rank can have a processor of its own (see spinBudget).
	spin bool
	// links holds the link from src to dst for each pair of ranks that
	// exchanged messages: made when first used, as a world of n ranks
	// has n^2 possible pairs, and most algorithms use few of them.
	links *pairtab.Table[link]
	// hub and watchers carry the ranks' agreement on how a call ended
	// (backends.Recoverer).
	hub      *agree.Hub
	watchers []agree.Watcher
}

// NewWorld returns a world of size ranks. Its endpoints are independent of
// any Backend.Run, which lets tests drive ranks directly.
func NewWorld(size int) *World {
	w := &World{size: size, links: pairtab.New(size, newLink), spin: size <= runtime.GOMAXPROCS(0),
		watchers: make([]agree.Watcher, size)}
	w.hub = agree.NewHub(size, w.relay)
	return w
}

// Endpoint returns the Transport of one rank. Each rank's endpoint must be
// used by one goroutine at a time.
func (w *World) Endpoint(rank int) backends.Transport {
	return &endpoint{w: w, rank: rank, links: w.links.Cache(rank)}
}

type endpoint struct {
	w      *World
	rank   int
	closed bool
	call   backends.Call // the current call (BeginCall), carried by every request
	// links are the links this rank sends and receives on, as it
	// looked them up.
	links pairtab.Cache[link]
	// freeSends and freeRecvs are requests to reuse (pool.go).
	freeSends []*sendReq
	freeRecvs []*recvReq
}

// BeginCall implements backends.CallTagger: requests posted from now on
// belong to call c, and a receive matched with a send of another call
// fails both with ErrMismatch, naming both sides.
func (e *endpoint) BeginCall(c backends.Call) { e.call = c }

func (e *endpoint) Rank() int { return e.rank }
func (e *endpoint) Size() int { return e.w.size }

func (e *endpoint) Close() error {
	e.closed = true
	return nil
}

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

// The memory an in-process rank's links take (LinkBytes): its place in the
// table of pairs an in-process world keeps (internal/pairtab), and for a
// pair it uses the table's entry and the two ranks' cached ones; and one
// link's queue and channels. Generous readings of small runs, as the
// memory estimate wants (it errs high).
const (
	tableBytes     = 16
	pairEntryBytes = 256
	linkBytes      = 2 << 10
)

// LinkBytes is what one rank's links take in a world of ranks ranks in
// one process, exchanging with peers of them, with tables tables of pairs
// (shm keeps one; sim, whose messages shm carries, two): the tables and
// each link, with the eager copies of the sender's ring up to EagerRanks
// ranks.
func LinkBytes(tables, ranks, peers int) int64 {
	link := int64(linkBytes)
	if ranks <= EagerRanks {
		link += EagerDepth * EagerBytes // the sender's copies
	}
	return int64(tables)*(tableBytes+int64(peers)*pairEntryBytes) + int64(peers)*link
}

// LinkBytes is what one rank's links take (backends.LinkMemory).
func (Backend) LinkBytes(ranks, peers int) int64 { return LinkBytes(1, ranks, peers) }
