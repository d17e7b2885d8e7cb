// Package agree lets the ranks of a world decide together how a collective
// call ended, so that all of them run it again or none does (operator
// re-execution). One Hub collects every rank's vote round by round: the
// shm backend shares one among its goroutines, and rank 0 of a tcp world
// hosts one for the votes that reach it over the control connections. A
// Watcher on each rank stops the rank's attempt when another rank reports
// a failure.
package agree

import (
	"context"
	"fmt"
	"sync"

	"github.com/hccl-test/hccl-test/backends"
)

// Kind says what a round decides.
type Kind uint8

const (
	// Verdict rounds decide how a call ended; a failure vote is relayed
	// to every rank as soon as it arrives.
	Verdict Kind = 1
	// Recovered rounds are a barrier: every rank has recovered its links
	// after a failed call and may run it again.
	Recovered Kind = 2
)

// Round names one decision: its kind and the call it is about.
type Round struct {
	Kind Kind
	Seq  uint64
}

// String describes the round in errors.
func (r Round) String() string {
	if r.Kind == Recovered {
		return fmt.Sprintf("recovering from op #%d", r.Seq)
	}
	return fmt.Sprintf("agreeing on op #%d", r.Seq)
}

// Hub collects the votes of n ranks. It is safe for concurrent use.
type Hub struct {
	n     int
	relay func(Round, backends.Vote)

	mu     sync.Mutex // guards the fields below
	rounds map[Round]*round
	lost   *backends.Vote // set once a rank is gone: it decides every round
	last   uint64         // the highest call a Verdict round has been about
}

// round is one decision in progress.
type round struct {
	voted   []bool
	count   int
	left    int // submitters that have not yet collected the verdict
	verdict backends.Vote
	relayed bool
	done    chan struct{} // closed once decided
}

// NewHub returns a hub for n ranks. relay is called once per Verdict round,
// with the first failure vote, as soon as it arrives; it runs on the
// submitting goroutine without the hub's lock and must not block on the
// hub.
func NewHub(n int, relay func(Round, backends.Vote)) *Hub {
	return &Hub{n: n, relay: relay, rounds: map[Round]*round{}}
}

// Submit casts v (v.Rank's vote) in round r and returns the verdict once
// every rank has voted: the worst outcome, from the lowest rank that
// reported it. It fails when ctx ends first, naming the ranks whose votes
// are missing.
func (h *Hub) Submit(ctx context.Context, r Round, v backends.Vote) (backends.Vote, error) {
	if v.Rank < 0 || v.Rank >= h.n {
		return backends.Vote{}, fmt.Errorf("%s: vote from rank %d of a world of %d", r, v.Rank, h.n)
	}
	h.mu.Lock()
	rd := h.roundLocked(r)
	if rd.voted[v.Rank] {
		h.mu.Unlock()
		return backends.Vote{}, fmt.Errorf("%s: %w: rank %d voted twice", r, backends.ErrMismatch, v.Rank)
	}
	rd.voted[v.Rank] = true
	rd.count++
	if rd.count == 1 || v.Worse(rd.verdict) {
		rd.verdict = v
	}
	relay := r.Kind == Verdict && v.Outcome != backends.Succeeded && !rd.relayed
	if relay {
		rd.relayed = true
	}
	if rd.count == h.n {
		close(rd.done)
	}
	h.mu.Unlock()
	if relay && h.relay != nil {
		h.relay(r, v)
	}

	select {
	case <-rd.done:
	case <-ctx.Done():
		select {
		case <-rd.done: // decided as the wait ended: the verdict counts
		default:
			return backends.Vote{}, fmt.Errorf("%s: %w: no word from %s", r, backends.ContextError(ctx), h.missing(rd))
		}
	}
	h.mu.Lock()
	verdict := rd.verdict
	if rd.left--; rd.left == 0 {
		delete(h.rounds, r)
	}
	h.mu.Unlock()
	return verdict, nil
}

// roundLocked returns round r, making it on first use. h.mu must be held.
func (h *Hub) roundLocked(r Round) *round {
	rd := h.rounds[r]
	if r.Kind == Verdict {
		h.last = max(h.last, r.Seq)
	}
	if rd == nil {
		rd = &round{voted: make([]bool, h.n), left: h.n, done: make(chan struct{})}
		h.rounds[r] = rd
		if h.lost != nil {
			h.decideLocked(rd, *h.lost)
		}
	}
	return rd
}

// decideLocked ends rd now with verdict v (a rank is gone). h.mu must be
// held.
func (h *Hub) decideLocked(rd *round, v backends.Vote) {
	select {
	case <-rd.done:
		return
	default:
	}
	rd.verdict, rd.count = v, h.n
	close(rd.done)
}

// Lose records that rank can vote no more (its process or connection is
// gone, for why): every round open now or later ends at once with a fatal
// verdict naming it. Open Verdict rounds are relayed, or, when none is
// open, the call after the last one voted on: the one the ranks are
// running, which they stop.
func (h *Hub) Lose(rank int, why error) {
	v := backends.Vote{Rank: rank, Outcome: backends.Fatal, Err: fmt.Sprintf("rank %d is gone: %v", rank, why)}
	h.mu.Lock()
	if h.lost != nil {
		h.mu.Unlock()
		return
	}
	h.lost = &v
	var relay []Round
	open := false
	for r, rd := range h.rounds {
		if r.Kind == Verdict && !rd.relayed {
			rd.relayed = true
			relay = append(relay, r)
		}
		open = open || r.Kind == Verdict
		h.decideLocked(rd, v)
	}
	if !open {
		relay = append(relay, Round{Kind: Verdict, Seq: h.last + 1})
	}
	h.mu.Unlock()
	if h.relay != nil {
		for _, r := range relay {
			h.relay(r, v)
		}
	}
}

// missing names the ranks that have not voted in rd: "rank 3" or
// "ranks 3, 5".
func (h *Hub) missing(rd *round) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for r, ok := range rd.voted {
		if !ok {
			out = append(out, r)
		}
	}
	return backends.RankList(out)
}
