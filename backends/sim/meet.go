package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// meeting is where the ranks of a world meet for the harness's own
// control calls (backends.Rendezvous): every rank is a goroutine of this
// process, so a call is values left in memory and a channel closed when
// the last rank has joined, not messages. It takes no virtual time: no
// clock moves and no port is booked, as the package comment says of the
// harness's own calls.
type meeting struct {
	mu   sync.Mutex // guards the fields below
	size int
	cur  *round // the call ranks are joining, nil between calls
	// gone marks the ranks that left the world (closed their endpoint),
	// left counts them.
	gone []bool
	left int
	// err, once set, fails every call: a call that a rank gave up on,
	// or that a rank left, leaves the ranks out of step.
	err error
}

// round is one control call.
type round struct {
	vals    [][]float64 // each rank's values, by rank
	in      []bool      // which ranks have joined
	joined  int
	combine func(all [][]float64) ([]float64, error)
	done    chan struct{} // closed once out and err are set
	out     []float64
	err     error
	// first is the rank that opened the call; expire, when set, fails
	// the call once first's time limit (MeetWithin) has passed.
	first  int
	expire *time.Timer
}

// newMeeting returns the meeting place of a world of size ranks.
func newMeeting(size int) *meeting {
	return &meeting{size: size, gone: make([]bool, size)}
}

// Meet implements backends.Rendezvous for the rank of e.
func (e *endpoint) Meet(ctx context.Context, v []float64, combine func(all [][]float64) ([]float64, error)) ([]float64, error) {
	return e.f.meet.join(ctx, 0, e.rank, v, combine)
}

// MeetWithin is Meet where each rank also gives up once limit has passed
// since it joined, as under a context.WithTimeout of its own, without
// one: the rank that opens the call has the earliest such deadline, and
// one timer for the call fails it there, naming that rank, as that
// rank's own deadline would. A world of thousands of ranks then pays a
// timer per call, not a timer and a context per rank and call (a tenth
// of a 16384-rank sweep's CPU, profiled). limit <= 0 sets none.
func (e *endpoint) MeetWithin(ctx context.Context, limit time.Duration, v []float64, combine func(all [][]float64) ([]float64, error)) ([]float64, error) {
	return e.f.meet.join(ctx, limit, e.rank, v, combine)
}

// join is Meet for rank, within limit where it is positive (MeetWithin).
func (m *meeting) join(ctx context.Context, limit time.Duration, rank int, v []float64, combine func(all [][]float64) ([]float64, error)) ([]float64, error) {
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return nil, m.err
	}
	r := m.cur
	if r == nil {
		if m.left > 0 {
			m.breakLocked(fmt.Errorf("harness call in memory: %s left the world", m.goneList()))
			m.mu.Unlock()
			return nil, m.err
		}
		r = &round{vals: make([][]float64, m.size), in: make([]bool, m.size), combine: combine, done: make(chan struct{}), first: rank}
		if limit > 0 {
			r.expire = time.AfterFunc(limit, func() { m.expired(r) })
		}
		m.cur = r
	}
	if r.in[rank] {
		m.breakLocked(fmt.Errorf("harness call in memory: rank %d joined one call twice", rank))
		m.mu.Unlock()
		return nil, m.err
	}
	r.vals[rank], r.in[rank] = v, true
	r.joined++
	if r.joined == m.size {
		m.cur = nil
		m.mu.Unlock()
		if r.expire != nil {
			r.expire.Stop()
		}
		r.out, r.err = r.combine(r.vals)
		r.vals = nil
		close(r.done)
		return r.out, r.err
	}
	m.mu.Unlock()
	// A break closes the call's done too (breakLocked): the ranks wait
	// on it and their own context, not on one more channel that all of
	// them, thousands in a simulated world, would queue on and dequeue
	// from under its lock.
	select {
	case <-r.done:
		return r.out, r.err
	case <-ctx.Done():
	}
	select {
	case <-r.done: // done wins over an end that came with it
		return r.out, r.err
	default:
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.breakLocked(fmt.Errorf("harness call in memory: rank %d waited for %s: %w",
			rank, missing(r), backends.ContextError(ctx)))
	}
	return nil, m.err
}

// expired fails call r, if it is still being joined, at the time limit
// of the rank that opened it (MeetWithin).
func (m *meeting) expired(r *round) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == r && m.err == nil {
		m.breakLocked(fmt.Errorf("harness call in memory: rank %d waited for %s: %w",
			r.first, missing(r), backends.ErrTimeout))
	}
}

// leave records that rank left the world: a call it has not joined, now
// or later, cannot complete.
func (m *meeting) leave(rank int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.gone[rank] {
		m.left++
	}
	m.gone[rank] = true
	if r := m.cur; r != nil && !r.in[rank] && m.err == nil {
		m.breakLocked(fmt.Errorf("harness call in memory: rank %d left the world before joining", rank))
	}
}

// breakLocked fails the meeting with err, and the call being joined,
// if any, whose waiting ranks return err; m.mu is held.
func (m *meeting) breakLocked(err error) {
	m.err = err
	if r := m.cur; r != nil {
		m.cur = nil
		r.err = err
		close(r.done)
		if r.expire != nil {
			r.expire.Stop()
		}
	}
}

// goneList names the ranks that left, "" when none did; m.mu is held.
func (m *meeting) goneList() string {
	var left []int
	for r, g := range m.gone {
		if g {
			left = append(left, r)
		}
	}
	if len(left) == 0 {
		return ""
	}
	return backends.RankList(left)
}

// missing names the ranks that have not joined r, as ranges.
func missing(r *round) string {
	var out []int
	for rank, in := range r.in {
		if !in {
			out = append(out, rank)
		}
	}
	return backends.RankList(out)
}
