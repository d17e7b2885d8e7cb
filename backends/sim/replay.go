package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/limits"
)

// World replay. A call without payload moves no bytes, so no rank's
// program can depend on what it receives: each rank's requests, their
// lengths and its own work follow from its program alone. RunWorld
// records every rank's program once, on a recorder that times nothing
// (one goroutine, no matching, no channels), then replays the records in
// virtual time as the endpoints would move the clocks: a rank's posts and
// waits in its program order, each send booked on its ports (fabric.book,
// the one formula), each receive's wait held until the matching send
// (the k-th of its pair) is booked. So the outcome is bit for bit the
// full simulation's (every rank's clock, ports, gap and time waited),
// whatever the program, at a fraction of its cost per message: where the
// symmetric replay (symmetric.go) needs every rank alike, this one takes
// calls whose ranks differ (halving and doubling whose parts are uneven, a
// world that is not a power of two, two levels). Where the world repeats
// server by server, one server's ranks are recorded and replayed for it
// (periodic.go).

// replayBudget bounds the requests a world's replay records: beyond it
// (a call of n² messages on a large world) the call runs message by
// message, as without the replay. A request's record takes about 84 bytes
// (32, its two ops' 32, its handle's 16 and its index's 4): 4 Mi of them
// about 350 MB. A 16384-rank allreduce by
// halving and doubling records 917,504; a periodic world (periodic.go)
// records one server's ranks only, so multiring's 33.5 Mi requests on
// 1024 ranks of 128 servers record 262,128. It is a variable so that the
// tests can see a call beyond it fall back.
var replayBudget = 1 << 22

// errReplay is what the recorder fails a request with where the replay
// cannot follow the program (a request shm would fail at once, or the
// budget spent): the call then runs on every rank.
var errReplay = errors.New("sim: the call cannot be replayed")

// replayRuns counts the calls RunWorld replayed, for the tests, and
// periodicRuns those of them it replayed for one period (periodic.go).
var replayRuns, periodicRuns atomic.Int64

// opKind is what a recorded step of a program does.
type opKind uint8

const (
	opPost opKind = iota // post request req (a send is booked now)
	opWait               // wait on request req
	opWork               // spend d of the rank's own time (a copy, a reduction)
)

// op is one recorded step of a rank's program.
type op struct {
	kind opKind
	req  int32
	d    time.Duration
}

// replayReq is a request a rank's program posted, in 32 bytes: what of
// a send's timing is not its length's (bytesAt) nor its level's is when
// it left (sent rebuilds the rest), and a receive's reduction costs what
// its length does (reduceTime).
type replayReq struct {
	n    int
	left time.Duration // a send's, once booked: when it left its port
	peer int32
	// match is, for a receive, the index of the matching send among the
	// peer's requests.
	match int32
	// reduces is set on a receive that reduces what it receives.
	send, waited, reduces bool
	// For a send: whether it is booked yet, whether its receiver waits
	// on it, and the level it travels on (timing.port).
	booked, waiter bool
	port           uint8
}

// sent returns the timing book gave booked send s: its latency and what
// it takes of the receiver's ingress port follow from its level and
// length as book works them out.
func (f *fabric) sent(s *replayReq) timing {
	l := f.links
	alpha, gbps := l.IntraAlpha, l.IntraGBps
	if s.port == 1 {
		alpha, gbps = l.InterAlpha, l.InterGBps
	}
	return timing{left: s.left, arrive: limits.AddDurations(s.left, alpha), port: int(s.port), x: bytesAt(s.n, gbps), alpha: alpha}
}

// trace is one rank's recorded program, then its state in the replay:
// its ops are ops[lo:hi] and its requests reqs[lo:hi] of the world's
// records (one slice each for the world, not one per rank).
type trace struct {
	ops, reqs [2]int32 // lo and hi
	pc        int32    // the next op to replay
	st        rankState
	// waited is the time the rank waited in the call.
	waited time.Duration
}

// records is every rank's recorded program, or in a periodic world
// (periodic.go) those of the first period ranks, whose programs every
// other rank's repeat, renamed.
type records struct {
	// period is how many ranks are recorded (the world's size, or its
	// period): rank r's outcome is that of trace r%period.
	period int
	traces []trace
	ops    []op
	reqs   []replayReq
}

// RunWorld runs one call for the whole world without moving a byte,
// where run is the call's program on a Transport of the rank that
// Transport names (t.Rank()). Every rank of the world must call it for
// the same call with an equivalent run. The ranks meet in memory (Meet,
// no virtual time) with their states; the last to arrive records run on
// every rank and replays the records, and every rank takes its outcome:
// its clock, ports and gap, and the time it waited. It reports false,
// with nil, when it did not (run failed on some rank, the program posted
// a request shm would fail, the records passed replayBudget, or a rank
// waited for a send that no rank posts): the caller then runs the call
// on every rank as usual, all ranks alike. An error is the meeting's (a
// rank gave up or left) or ctx's, which the replay watches.
//
// key, where not nil, names the call's programs: a call of an equal key
// runs the same programs on every rank, so the records of the latest call
// replayed are replayed again without recording (a row's iterations).
func (e *endpoint) RunWorld(ctx context.Context, key any, run func(t backends.Transport) error) (bool, error) {
	if e.closed || e.f.links.Pull {
		return false, nil
	}
	// The rank's state, as TimeWorld carries it (rankTimesLen values):
	// its ingress ports too, which the replay's receives take (ingress).
	in := []float64{f64(e.Now()), f64(e.Waited()), f64(e.issue), f64(e.busy[0]), f64(e.busy[1]), f64(e.in[0]), f64(e.in[1])}
	out, err := e.Meet(ctx, in, func(all [][]float64) ([]float64, error) {
		w, err := e.f.records(ctx, key, run, e.f.periodOf(all))
		if w == nil || err != nil {
			return nil, err
		}
		w.start(all)
		if ok, err := e.f.replay(ctx, w); !ok || err != nil {
			return nil, err
		}
		if w.period < e.f.size {
			periodicRuns.Add(1)
		}
		return w.outcome(all), nil
	})
	if err != nil {
		return false, fmt.Errorf("sim: call replayed for the world: %w", err)
	}
	if len(out) != rankTimesLen*e.f.size {
		return false, nil
	}
	v := out[rankTimesLen*e.rank:]
	e.clock.Store(int64(dur(v[0])))
	e.waited.Store(int64(dur(v[1])))
	e.issue, e.busy = dur(v[2]), [2]time.Duration{dur(v[3]), dur(v[4])}
	e.in = [2]time.Duration{dur(v[5]), dur(v[6])}
	if e.rank == 0 {
		replayRuns.Add(1) // counted where the ranks took the outcome
	}
	return true, nil
}

// start sets the recorded ranks' states to all's (as RunWorld meets
// them: rankTimesLen values a rank).
func (w *records) start(all [][]float64) {
	for r := range w.traces {
		t, v := &w.traces[r], all[r]
		t.st = rankState{clock: dur(v[0]), issue: dur(v[2]), busy: [2]time.Duration{dur(v[3]), dur(v[4])},
			in: [2]time.Duration{dur(v[5]), dur(v[6])}}
		t.waited = dur(v[1])
	}
}

// outcome returns every rank's state after the replay, as RunWorld
// hands them out, the ranks having started in states all: the state of
// the recorded rank in its place, and the time it waited before the
// call plus what the call made that rank wait (alike for every rank of
// the place).
func (w *records) outcome(all [][]float64) []float64 {
	res := make([]float64, 0, rankTimesLen*len(all))
	for r, v := range all {
		t := &w.traces[r%w.period]
		s, waited := t.st, dur(v[1])+t.waited-dur(all[r%w.period][1])
		res = append(res, f64(s.clock), f64(waited), f64(s.issue), f64(s.busy[0]), f64(s.busy[1]), f64(s.in[0]), f64(s.in[1]))
	}
	return res
}

// f64 and dur carry a duration's bits in a float64 and back, so that no
// nanosecond is lost in a meeting.
func f64(d time.Duration) float64 { return math.Float64frombits(uint64(d)) }
func dur(x float64) time.Duration { return time.Duration(math.Float64bits(x)) }

// records returns the records of key's programs: those of the latest
// call replayed, reset, where it had the same key, else run's, recorded
// (record) and kept for the next call. Only the rank that combines a
// meeting calls it, one meeting at a time.
//
// period is the world's period for this call (periodOf): records of a
// world of another period are not reused, unless they are the whole
// world's, which serve any call.
func (f *fabric) records(ctx context.Context, key any, run func(t backends.Transport) error, period int) (*records, error) {
	if key != nil && f.kept.w != nil && f.kept.key == key && (f.kept.w.period == f.size || f.kept.w.period == period) {
		w := f.kept.w
		for i := range w.traces {
			w.traces[i].pc = w.traces[i].ops[0]
		}
		for i := range w.reqs {
			q := &w.reqs[i]
			q.waited, q.booked, q.waiter = false, false, false
		}
		return w, nil
	}
	f.kept.key, f.kept.w = nil, nil
	w, err := f.record(ctx, run, period)
	if w != nil && err == nil && key != nil {
		f.kept.key, f.kept.w = key, w
	}
	return w, err
}

// record runs run on a recorder of every rank of f and matches every
// receive with its send. Where period is less than the world's size, it
// records the first period ranks, and checks that every other rank's
// program is theirs renamed (periodic.go); where one is not, it records
// the rest of the world after all. It returns nil, with a nil error,
// where the program cannot be replayed; an error only when ctx ended.
func (f *fabric) record(ctx context.Context, run func(t backends.Transport) error, period int) (*records, error) {
	w := &records{period: f.size, traces: make([]trace, min(period, f.size))}
	rec := &recorder{f: f, w: w}
	// byPeer is a rank's requests of one kind, in posting order, sorted
	// stably by peer: the k-th to peer p is the k-th of p's run.
	var sends, recvs []int32
	sendsOf := make([][2]int32, f.size) // where each rank's sends, sorted, start and end in bySend
	var bySend []int32
	for r := 0; r < len(w.traces); r++ {
		if r%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, backends.ContextError(ctx)
			}
		}
		t := &w.traces[r]
		t.ops[0], t.reqs[0] = int32(len(w.ops)), int32(len(w.reqs))
		rec.rank = r
		if err := run(rec); err != nil || rec.failed {
			return nil, nil
		}
		t.ops[1], t.reqs[1] = int32(len(w.ops)), int32(len(w.reqs))
		t.pc = t.ops[0]
		if r == 0 {
			// Ranks mostly run programs of about rank 0's length: room
			// for the records at once, not a copy per doubling.
			w.ops = slices.Grow(w.ops, min(len(w.ops)*len(w.traces), 2*replayBudget))
			w.reqs = slices.Grow(w.reqs, min(len(w.reqs)*len(w.traces), replayBudget))
		}
		sends = sends[:0]
		for i := t.reqs[0]; i < t.reqs[1]; i++ {
			if w.reqs[i].send {
				sends = append(sends, i)
			}
		}
		slices.SortStableFunc(sends, func(a, b int32) int { return cmp.Compare(w.reqs[a].peer, w.reqs[b].peer) })
		sendsOf[r] = [2]int32{int32(len(bySend)), int32(len(bySend) + len(sends))}
		bySend = append(bySend, sends...)
		if r+1 == len(w.traces) && r+1 < f.size {
			// The recorded ranks are a period: every other rank's
			// program must be theirs renamed, else record the rest.
			ok, err := rec.periodic(ctx, run, len(w.traces))
			if err != nil {
				return nil, err
			}
			if ok {
				w.period = len(w.traces)
			} else {
				w.traces = append(w.traces, make([]trace, f.size-len(w.traces))...)
			}
		}
	}
	for r := range w.traces {
		t := &w.traces[r]
		recvs = recvs[:0]
		for i := t.reqs[0]; i < t.reqs[1]; i++ {
			if !w.reqs[i].send {
				recvs = append(recvs, i)
			}
		}
		slices.SortStableFunc(recvs, func(a, b int32) int { return cmp.Compare(w.reqs[a].peer, w.reqs[b].peer) })
		k, prev := 0, int32(-1) // q is the k-th receive from its peer
		for _, i := range recvs {
			q := &w.reqs[i]
			if q.peer != prev {
				k, prev = 0, q.peer
			}
			// The peer's sends to r: the run of its sorted sends whose
			// peer is r. In a periodic world, those of the recorded
			// rank in the peer's place to r renamed alike.
			from, to := w.rename(int(q.peer), r, f.size)
			ps := bySend[sendsOf[from][0]:sendsOf[from][1]]
			first, _ := slices.BinarySearchFunc(ps, to, func(i, r int32) int { return cmp.Compare(w.reqs[i].peer, r) })
			if first+k >= len(ps) || w.reqs[ps[first+k]].peer != to || w.reqs[ps[first+k]].n != q.n {
				return nil, nil // no such send, or of another length: shm fails it
			}
			q.match = ps[first+k]
			k++
		}
	}
	return w, nil
}

// replay moves every rank's state through its trace, as the endpoints
// would. It reports false where some rank waits for a send no rank posts
// (the call would hang: the full simulation says so, in its own time).
func (f *fabric) replay(ctx context.Context, w *records) (bool, error) {
	ready := make([]int32, 0, len(w.traces))
	for r := len(w.traces) - 1; r >= 0; r-- {
		ready = append(ready, int32(r))
	}
	done, steps := 0, 0
	for len(ready) > 0 {
		r := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		t := &w.traces[r]
	run:
		for ; t.pc < t.ops[1]; t.pc++ {
			if steps++; steps%4096 == 0 && ctx.Err() != nil {
				return false, backends.ContextError(ctx)
			}
			o := w.ops[t.pc]
			switch o.kind {
			case opWork:
				t.st.advance(limits.AddDurations(t.st.clock, o.d))
			case opPost:
				q := &w.reqs[o.req]
				if !q.send {
					continue
				}
				at := f.book(int(r), int(q.peer), q.n, 0, t.st.clock, &t.st.busy, &t.st.issue)
				q.left, q.port, q.booked = at.left, uint8(at.port), true
				if q.waiter {
					ready = append(ready, q.peer%int32(w.period))
				}
			case opWait:
				q := &w.reqs[o.req]
				if q.waited {
					continue
				}
				if q.send {
					q.waited = true
					t.st.advance(q.left)
					continue
				}
				s := &w.reqs[q.match]
				if !s.booked {
					s.waiter = true
					break run // resumed when the peer books it
				}
				q.waited = true
				// The receiving side's one formula, as the endpoints'
				// receives (recvReq.Wait) take it.
				arrive := ingress(f.sent(s), &t.st.in)
				if idle := arrive - t.st.clock; idle > 0 {
					t.waited += idle
					t.st.advance(arrive)
				}
				if q.reduces {
					t.st.advance(limits.AddDurations(t.st.clock, f.reduceTime(q.n)))
				}
			}
		}
		if t.pc == t.ops[1] {
			done++
		}
	}
	return done == len(w.traces), nil
}

// advance moves the state's clock forward to t, no further than
// ClockLimit, as endpoint.advance does.
func (s *rankState) advance(t time.Duration) { s.clock = max(s.clock, min(t, backends.ClockLimit)) }
