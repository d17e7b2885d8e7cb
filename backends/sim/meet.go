package sim

import (
	"context"
	"fmt"
	"sync"

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
	// gone marks the ranks that left the world (closed their endpoint).
	gone []bool
	// err, once set, fails every call: a call that a rank gave up on,
	// or that a rank left, leaves the ranks out of step.
	err   error
	broke chan struct{} // closed when err is set
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
}

// newMeeting returns the meeting place of a world of size ranks.
func newMeeting(size int) *meeting {
	return &meeting{size: size, gone: make([]bool, size), broke: make(chan struct{})}
}

// Meet implements backends.Rendezvous for the rank of e.
func (e *endpoint) Meet(ctx context.Context, v []float64, combine func(all [][]float64) ([]float64, error)) ([]float64, error) {
	return e.f.meet.join(ctx, e.rank, v, combine)
}

// join is Meet for rank.
func (m *meeting) join(ctx context.Context, rank int, v []float64, combine func(all [][]float64) ([]float64, error)) ([]float64, error) {
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return nil, m.err
	}
	r := m.cur
	if r == nil {
		if left := m.goneList(); left != "" {
			m.breakLocked(fmt.Errorf("harness call in memory: %s left the world", left))
			m.mu.Unlock()
			return nil, m.err
		}
		r = &round{vals: make([][]float64, m.size), in: make([]bool, m.size), combine: combine, done: make(chan struct{})}
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
		r.out, r.err = r.combine(r.vals)
		r.vals = nil
		close(r.done)
		return r.out, r.err
	}
	m.mu.Unlock()
	select {
	case <-r.done:
		return r.out, r.err
	case <-ctx.Done():
	case <-m.broke:
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

// leave records that rank left the world: a call it has not joined, now
// or later, cannot complete.
func (m *meeting) leave(rank int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gone[rank] = true
	if r := m.cur; r != nil && !r.in[rank] && m.err == nil {
		m.breakLocked(fmt.Errorf("harness call in memory: rank %d left the world before joining", rank))
	}
}

// breakLocked fails the meeting with err; m.mu is held.
func (m *meeting) breakLocked(err error) {
	m.err = err
	close(m.broke)
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
