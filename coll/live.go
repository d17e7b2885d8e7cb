package coll

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/ticks"
)

// live is what a rank is doing now. The rank's goroutine writes it with
// atomic stores only, so that it costs a few nanoseconds per call, and any
// goroutine may read it while the run goes on (the report on SIGQUIT).
type live struct {
	// call is the number of the latest call, shifted left by one, with
	// the low bit set while inside it: one store a call's start and one
	// its end (each a locked instruction on amd64, where five were a
	// tenth of a small call's cost).
	call atomic.Uint64
	// args and algo are the latest call's, stored only when they change
	// (a row repeats them); args is nil in a barrier.
	args  atomic.Pointer[Args]
	algo  atomic.Pointer[algorithm]
	since atomic.Int64 // when the current wait began (ticks.Now, plus one), 0 when not waiting
	// peers holds what the current wait is for: peer<<1 | send, plus one;
	// 0 marks the end.
	peers [livePeers]atomic.Int64
}

// livePeers is how many of a wait's requests the live status names.
const livePeers = 8

// barrierAlgo stands for the barrier in the live status.
var barrierAlgo = algorithm{name: "barrier"}

// nativeAlgo stands for the backend's own collectives in the live status.
var nativeAlgo = algorithm{name: Native}

func (l *live) begin(seq uint64, a *Args, alg *algorithm) {
	if l.args.Load() != a {
		l.args.Store(a)
	}
	if l.algo.Load() != alg {
		l.algo.Store(alg)
	}
	l.call.Store(seq<<1 | 1)
}

func (l *live) end() { l.call.Store(l.call.Load() &^ 1) }

// waiting records the requests a wait is for.
func (l *live) waiting(start ticks.Ticks, reqs []backends.Request) {
	n := 0
	for _, r := range reqs {
		if n == livePeers {
			break
		}
		if p, ok := r.(backends.PeerReporter); ok {
			peer, send := p.Peer()
			v := int64(peer) << 1
			if send {
				v |= 1
			}
			// Stored only when it changes: a row's waits repeat.
			if l.peers[n].Load() != v+1 {
				l.peers[n].Store(v + 1)
			}
			n++
		}
	}
	if n < livePeers && l.peers[n].Load() != 0 {
		l.peers[n].Store(0)
	}
	l.since.Store(int64(start) + 1)
}

func (l *live) waited() { l.since.Store(0) }

// Status describes what the rank is doing, for a report on a run that
// seems stuck; safe to call from any goroutine while the rank runs.
func (c *Comm) Status() string {
	l := &c.live
	call := l.call.Load()
	seq := call >> 1
	if call&1 == 0 {
		if seq == 0 {
			return fmt.Sprintf("rank %d: no collective yet", c.rank)
		}
		return fmt.Sprintf("rank %d: between calls, op #%d done", c.rank, seq)
	}
	what := "barrier"
	if a := l.args.Load(); a != nil {
		what = signature(a).String()
	}
	s := fmt.Sprintf("rank %d: in op #%d %s", c.rank, seq, what)
	if alg := l.algo.Load(); alg != nil && alg != &barrierAlgo {
		s += " (" + alg.name + ")"
	}
	since := l.since.Load()
	if since == 0 {
		return s + ", working"
	}
	var on []string
	for i := range l.peers {
		v := l.peers[i].Load()
		if v == 0 {
			break
		}
		v--
		dir := "receive from"
		if v&1 == 1 {
			dir = "send to"
		}
		on = append(on, fmt.Sprintf("%s rank %d", dir, v>>1))
	}
	s += fmt.Sprintf(", waiting %v", (ticks.Now() - ticks.Ticks(since-1)).Duration().Round(time.Millisecond))
	if len(on) > 0 {
		s += " to " + strings.Join(on, ", ")
	}
	return s
}
