package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/limits"
)

// Symmetric evaluation. A call of an algorithm whose every rank runs the
// program of rank 0 with its peers renamed by r XOR p (recursive doubling
// and halving on a power of two, with equal blocks) keeps every rank's
// clock, ports and gap equal to every other's, step by step, when they
// start equal: rank r's k-th message to p is rank 0's k-th message to
// r XOR p, timed alike. So one rank's program, run against a mirror that
// answers each receive from p with the timing of its own k-th send to p
// (the message p sends it, renamed), gives every rank's outcome, in
// O(messages of one rank) instead of O(messages of the world), and bit
// for bit the same figures as running every rank. The layout of servers
// must be symmetric too: one server, or servers of a power of two ranks.

// errAsymmetric is what the mirror's receives fail with when the
// program is not symmetric after all (a receive with no matching send of
// the mirror's own, or of another length): the call then runs on every
// rank.
var errAsymmetric = errors.New("sim: the call is not symmetric")

// symmetricRuns counts the calls RunSymmetric ran for a whole world, for
// the tests to see that it did.
var symmetricRuns atomic.Int64

// worldTimings counts the calls TimeWorld timed, for the tests.
var worldTimings atomic.Int64

// stateLen is the length of an encoded rankState.
const stateLen = 6

// rankState is what of a rank the link model reads and moves.
type rankState struct {
	clock, issue time.Duration
	busy, in     [2]time.Duration
}

// encode packs s for a meeting, each duration's bits as a float64's, so
// that no nanosecond is lost.
func (s rankState) encode() []float64 {
	f := func(d time.Duration) float64 { return math.Float64frombits(uint64(d)) }
	return []float64{f(s.clock), f(s.issue), f(s.busy[0]), f(s.busy[1]), f(s.in[0]), f(s.in[1])}
}

// decodeState unpacks what encode packed.
func decodeState(v []float64) rankState {
	d := func(x float64) time.Duration { return time.Duration(math.Float64bits(x)) }
	return rankState{clock: d(v[0]), issue: d(v[1]), busy: [2]time.Duration{d(v[2]), d(v[3])}, in: [2]time.Duration{d(v[4]), d(v[5])}}
}

// sameBits reports whether a and b hold the same bits.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// symmetricLayout reports whether renaming ranks by XOR keeps every pair's
// link: a power of two ranks on one server, or on servers of a power of
// two ranks each; and messages move on ports (not Pull).
func (f *fabric) symmetricLayout() bool {
	pow2 := func(x int) bool { return x > 0 && bits.OnesCount(uint(x)) == 1 }
	p := f.links.PerServer
	return !f.links.Pull && pow2(f.size) && (p <= 0 || p >= f.size || pow2(p))
}

// RunSymmetric runs one call of a program that is symmetric under renaming
// ranks by XOR once for the whole world, where run is that program on a
// Transport of rank 0. Every rank of the world must call it for the same
// call with an equivalent run. The ranks meet in memory (Meet, no virtual
// time); if their clocks, ports and gaps agree, and the layout is
// symmetric, the last to arrive runs run on a mirror (no payload: nothing
// is moved) and every rank takes the outcome: its clock, ports and gap,
// and the time it waited. It reports false, with nil, when it did not (the
// ranks disagree, or run found the program asymmetric): the caller then
// runs the call on every rank as usual, all ranks alike. An error is the
// meeting's (a rank gave up or left).
func (e *endpoint) RunSymmetric(ctx context.Context, run func(t backends.Transport) error) (bool, error) {
	if !e.f.symmetricLayout() || e.closed {
		return false, nil
	}
	in := rankState{clock: e.Now(), issue: e.issue, busy: e.busy, in: e.in}
	out, err := e.Meet(ctx, in.encode(), func(all [][]float64) ([]float64, error) {
		for _, v := range all[1:] {
			if !sameBits(v, all[0]) {
				return nil, nil
			}
		}
		m := newMirror(e.f, decodeState(all[0]))
		if err := run(m); err != nil {
			return nil, nil // asymmetric, or the run failed: every rank runs it
		}
		symmetricRuns.Add(1)
		s := rankState{clock: m.clock, issue: m.issue, busy: m.busy, in: m.in}
		return append(s.encode(), math.Float64frombits(uint64(m.waited))), nil
	})
	if err != nil {
		return false, fmt.Errorf("sim: symmetric call: %w", err)
	}
	if len(out) != stateLen+1 {
		return false, nil
	}
	s := decodeState(out)
	e.clock.Store(int64(s.clock))
	e.issue, e.busy, e.in = s.issue, s.busy, s.in
	e.waited.Add(int64(math.Float64bits(out[stateLen])))
	return true, nil
}

// mirror is rank 0 of a symmetric world (RunSymmetric): its sends are
// booked on its ports as an endpoint's are, and its receive from p, the
// k-th on that pair, arrives as its own k-th send to p did. It is used by
// one goroutine; it moves no bytes.
type mirror struct {
	f                    *fabric
	clock, waited, issue time.Duration
	busy, in             [2]time.Duration
	sent                 map[int][]sentMsg // by peer, in posting order
	recvd                map[int]int       // receives posted, by peer
}

// sentMsg is a send of the mirror: its timing and length.
type sentMsg struct {
	t timing
	n int
}

// newMirror returns rank 0 of f in state s.
func newMirror(f *fabric, s rankState) *mirror {
	return &mirror{f: f, clock: s.clock, issue: s.issue, busy: s.busy, in: s.in, sent: map[int][]sentMsg{}, recvd: map[int]int{}}
}

// Rank implements backends.Transport: the mirror is rank 0.
func (m *mirror) Rank() int { return 0 }

// Size implements backends.Transport.
func (m *mirror) Size() int { return m.f.size }

// Close implements backends.Transport.
func (m *mirror) Close() error { return nil }

// Now implements backends.Clock.
func (m *mirror) Now() time.Duration { return m.clock }

// Waited implements backends.WaitClock.
func (m *mirror) Waited() time.Duration { return m.waited }

// advance moves the clock forward to t, no further than ClockLimit, as
// endpoint.advance does.
func (m *mirror) advance(t time.Duration) { m.clock = max(m.clock, min(t, backends.ClockLimit)) }

// Copied implements backends.LocalWorker as the endpoint does.
func (m *mirror) Copied(n int) {
	m.advance(limits.AddDurations(m.clock, bytesAt(n, m.f.links.CopyGBps)))
}

// Reduced implements backends.LocalWorker as the endpoint does.
func (m *mirror) Reduced(n int) { m.advance(limits.AddDurations(m.clock, m.f.reduceTime(n))) }

// valid reports whether peer is another rank of the world.
func (m *mirror) valid(peer int) bool { return peer > 0 && peer < m.f.size }

// Send implements backends.Transport: booked now, done when it has left.
func (m *mirror) Send(peer int, buf []byte) backends.Request {
	if !m.valid(peer) {
		return failed{fmt.Errorf("sim: mirror send to rank %d: %w", peer, errAsymmetric)}
	}
	t := m.f.book(0, peer, len(buf), 0, m.clock, &m.busy, &m.issue)
	m.sent[peer] = append(m.sent[peer], sentMsg{t: t, n: len(buf)})
	return &mirrorSend{m: m, left: t.left}
}

// Recv implements backends.Transport.
func (m *mirror) Recv(peer int, buf []byte) backends.Request { return m.recv(peer, len(buf), 0) }

// RecvReduce implements backends.Transport: the reduction costs what the
// endpoint's does.
func (m *mirror) RecvReduce(peer int, dst, acc []byte, _ dtype.ReduceFunc) backends.Request {
	if len(acc) < len(dst) {
		return failed{fmt.Errorf("sim: mirror receive-reduce from rank %d: accumulator shorter than the result: %w", peer, errAsymmetric)}
	}
	return m.recv(peer, len(dst), m.f.reduceTime(len(dst)))
}

// recv numbers a receive of n bytes from peer.
func (m *mirror) recv(peer, n int, reduce time.Duration) backends.Request {
	if !m.valid(peer) {
		return failed{fmt.Errorf("sim: mirror receive from rank %d: %w", peer, errAsymmetric)}
	}
	k := m.recvd[peer]
	m.recvd[peer]++
	return &mirrorRecv{m: m, peer: peer, k: k, n: n, reduce: reduce}
}

// mirrorSend is a send of the mirror.
type mirrorSend struct {
	m    *mirror
	left time.Duration
}

// Wait implements backends.Request: the clock moves to when the data left.
func (s *mirrorSend) Wait(context.Context) error {
	s.m.advance(s.left)
	return nil
}

// mirrorRecv is a receive of the mirror: the k-th from peer, of n bytes.
type mirrorRecv struct {
	m          *mirror
	peer, k, n int
	reduce     time.Duration
	done       bool
	err        error
}

// Wait implements backends.Request: the message peer sent is, renamed,
// the mirror's own k-th send to peer, which must be posted by now and of
// the same length; the clock moves as an endpoint's receive moves it.
func (r *mirrorRecv) Wait(context.Context) error {
	if r.done {
		return r.err
	}
	r.done = true
	m := r.m
	sent := m.sent[r.peer]
	if r.k >= len(sent) || sent[r.k].n != r.n {
		r.err = fmt.Errorf("sim: mirror receive %d from rank %d: %w", r.k, r.peer, errAsymmetric)
		return r.err
	}
	arrive := ingress(sent[r.k].t, &m.in)
	if idle := arrive - m.clock; idle > 0 {
		m.waited += idle
		m.advance(arrive)
	}
	m.advance(limits.AddDurations(m.clock, r.reduce))
	return nil
}

// failed is a request that failed when posted.
type failed struct{ err error }

// Wait implements backends.Request.
func (f failed) Wait(context.Context) error { return f.err }

// rankTimesLen is the length of an encoded backends.RankTimes.
const rankTimesLen = 7

// TimeWorld implements backends.WorldTimer: the ranks meet in memory
// with their states, each duration's bits as a float64's (no nanosecond
// lost), and the last to arrive runs eval on all of them.
func (e *endpoint) TimeWorld(ctx context.Context, eval func(l backends.LinkTimes, ranks []backends.RankTimes) bool) (bool, error) {
	l := e.f.links
	if e.closed || l.Pull || e.f.server(0) != e.f.server(e.f.size-1) {
		return false, nil
	}
	f := func(d time.Duration) float64 { return math.Float64frombits(uint64(d)) }
	d := func(x float64) time.Duration { return time.Duration(math.Float64bits(x)) }
	in := []float64{f(e.Now()), f(e.Waited()), f(e.issue), f(e.busy[0]), f(e.busy[1]), f(e.in[0]), f(e.in[1])}
	out, err := e.Meet(ctx, in, func(all [][]float64) ([]float64, error) {
		ranks := make([]backends.RankTimes, len(all))
		for r, v := range all {
			ranks[r] = backends.RankTimes{Clock: d(v[0]), Waited: d(v[1]), Issue: d(v[2]), Busy: [2]time.Duration{d(v[3]), d(v[4])},
				In: [2]time.Duration{d(v[5]), d(v[6])}}
		}
		lt := backends.LinkTimes{
			Alpha: l.IntraAlpha, Gap: l.Gap,
			Move:   func(n int) time.Duration { return bytesAt(n, l.IntraGBps) },
			Reduce: func(n int) time.Duration { return bytesAt(n, l.ReduceGBps) },
			Copy:   func(n int) time.Duration { return bytesAt(n, l.CopyGBps) },
		}
		if !eval(lt, ranks) {
			return nil, nil
		}
		worldTimings.Add(1)
		res := make([]float64, 0, rankTimesLen*len(ranks))
		for _, s := range ranks {
			res = append(res, f(min(s.Clock, backends.ClockLimit)), f(s.Waited), f(s.Issue), f(s.Busy[0]), f(s.Busy[1]), f(s.In[0]), f(s.In[1]))
		}
		return res, nil
	})
	if err != nil {
		return false, fmt.Errorf("sim: call timed for the world: %w", err)
	}
	if len(out) != rankTimesLen*e.f.size {
		return false, nil
	}
	v := out[rankTimesLen*e.rank:]
	e.clock.Store(int64(d(v[0])))
	e.waited.Store(int64(d(v[1])))
	e.issue, e.busy, e.in = d(v[2]), [2]time.Duration{d(v[3]), d(v[4])}, [2]time.Duration{d(v[5]), d(v[6])}
	return true, nil
}
