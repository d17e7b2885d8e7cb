package isolate

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/group"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// search is the live search on one rank.
type search struct {
	o    LiveOptions
	t    backends.Transport
	rank int
	p    *plan
	// local is a communicator of this host's ranks, which line up before
	// each slot so that the rails of a host measure together; nil when
	// the host has one rank, or once a line-up failed (it is not tried
	// again: its links may hold a stale message).
	local      *coll.Comm
	send, recv []byte
	// abandoned holds the buffers of measurements that failed: a receive
	// given up at its deadline may still be filled until the transport
	// closes, so they are never used again.
	abandoned [][]byte
	results   []result
	ran       int    // slots run to their end: all of them, unless stopped
	stopped   string // what stopped this rank (a signal), "" if nothing did
}

// result is one rank's view of one measurement (of its rail, for a pair).
type result struct {
	M       int     `json:"m"`    // index in plan.meas
	Rail    int     `json:"rail"` // -1 for a group
	Rank    int     `json:"rank"`
	Seconds float64 `json:"s"` // time of the fastest iteration, 0 when it failed
	Err     string  `json:"err,omitempty"`
	Wrong   int64   `json:"wrong,omitempty"`
}

func newSearch(o LiveOptions, t backends.Transport) (*search, error) {
	hosts, ok := backends.HostsOf(t)
	if o.PerHost > 0 {
		if t.Size()%o.PerHost != 0 || t.Size()/o.PerHost < 2 {
			return nil, fmt.Errorf("--per-host %d: the world's %d ranks must make 2 hosts or more of %d ranks each", o.PerHost, t.Size(), o.PerHost)
		}
		hosts, ok = hostsByPerHost(t.Size(), o.PerHost), true
	}
	if !ok {
		return nil, fmt.Errorf("backend %s reports no hosts (its ranks share one process): give --per-host to count ranks as hosts", o.Backend)
	}
	p, err := newPlan(hosts)
	if err != nil {
		return nil, err
	}
	s := &search{o: o, t: t, rank: t.Rank(), p: p}
	s.newBuffers()
	if mine := p.ranksOf[p.hostOf[s.rank]]; len(mine) > 1 {
		g, err := group.New(t, mine)
		if err != nil {
			return nil, err
		}
		s.local = coll.NewComm(g)
	}
	return s, nil
}

func (s *search) newBuffers() {
	s.send, s.recv = make([]byte, s.o.Bytes), make([]byte, s.o.Bytes)
}

// run measures this rank's part of every slot, each by its deadline, and
// sends its results to rank 0; rank 0 returns the report.
func (s *search) run(ctx context.Context) (*LiveReport, error) {
	// The ranks start together, while every link is expected up: a world
	// that cannot meet once is not searched. Meeting is part of setting
	// up (ranks still starting on a loaded host), so it may take the
	// longer of the two limits.
	bctx, cancel := context.WithTimeout(ctx, max(s.o.Timeout, s.o.ConnectTimeout))
	err := coll.NewComm(s.t).Barrier(bctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("the barrier before the search: %w", err)
	}
	start := time.Now()
	s.ran = s.p.slots
	// The pairs' results go to rank 0 before the groups are measured, in
	// a slot of their own: a group that fails drops the links among its
	// ranks, rank 0's among them, and would take the pairs' results with
	// it (in an 8-host run the half with a downed host lost two healthy
	// ranks' reports so).
	var all []result
	ran := s.p.slots
	missing := map[int]string{}
	stopped := "" // what stopped the rank that ran the fewest slots
	gathered := func(got []result, r int, miss map[int]string, stop string, phase string) {
		if stop != "" && (stopped == "" || r < ran) {
			stopped = stop
		}
		all, ran = append(all, got...), min(ran, r)
		for rank, why := range miss {
			if _, ok := missing[rank]; !ok {
				missing[rank] = phase + ": " + why
			}
		}
	}
	// mid: the plan has groups after its pairs, and so a gather between
	// them; every rank sends it (rank 0 collects it) exactly once, even
	// when stopped before it, so that on each link to rank 0 the reports
	// come in one order whatever slot each rank was stopped in (rank 0
	// stopped in the rounds took its peers' gather after the pairs for
	// their last, called the pairs they had measured failed, and named
	// two healthy hosts).
	mid, midDone := s.p.slots > s.p.pairSlots && s.p.pairSlots > 0, false
	gatherMid := func(deadline time.Time) {
		// Not cancelled by a stop: what was measured still travels.
		gctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		if s.rank != 0 {
			s.report(gctx, 0)
		} else {
			got, r, miss, stop := s.collect(gctx, 0)
			gathered(got, r, miss, stop, "after the pairs")
		}
		s.results, midDone = nil, true
	}
	extra := 0 // limits spent gathering
	for slot := range s.p.slots {
		if mid && slot == s.p.pairSlots {
			gatherMid(start.Add(time.Duration(slot+1) * s.o.Timeout))
			extra = 1
		}
		// A rank that is early waits for its peers in the measurement
		// itself; none of them is later than the end of the slot before,
		// so each measurement has about one limit, never less than the
		// rest of its slot.
		sctx, cancel := context.WithDeadline(ctx, start.Add(time.Duration(slot+1+extra)*s.o.Timeout))
		if s.local != nil {
			if err := s.local.Barrier(sctx); err != nil {
				s.local = nil
			}
		}
		for mi := range s.p.meas {
			m := &s.p.meas[mi]
			if m.Slot != slot {
				continue
			}
			if peers, rail, ok := m.part(s.rank); ok {
				s.results = append(s.results, s.measure(sctx, mi, m, peers, rail))
			}
		}
		cancel()
		if ctx.Err() != nil {
			// Stopped (a signal): this slot's measurements were cut
			// short, not failed; the ones before it are reported.
			s.ran, s.stopped = slot, context.Cause(ctx).Error()
			break
		}
	}
	// The results travel even when the run was stopped, within one more
	// limit (and never past the search's own end), so that what was
	// measured is reported.
	end := start.Add(time.Duration(s.p.slots+1+extra) * s.o.Timeout)
	if ctx.Err() != nil {
		end = time.Now().Add(s.o.Timeout)
	}
	if mid && !midDone {
		gatherMid(end) // stopped in the rounds: both gathers within the one limit
	}
	gctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), end)
	defer cancel()
	if s.rank != 0 {
		s.report(gctx, 1)
		return nil, nil
	}
	got, r, miss, stop := s.collect(gctx, 1)
	gathered(got, r, miss, stop, "at the end")
	rep := liveReport(s.o, s.p, all, ran, missing)
	if ctx.Err() != nil {
		rep.Stopped = context.Cause(ctx).Error()
	} else if ran < s.p.slots {
		// Another rank was stopped (a signal to its process alone):
		// the slots after its stop are left out, and the report says
		// which rank it was.
		rep.Stopped = stopped
	}
	return rep, nil
}

// measure runs measurement m on this rank: a sendrecv with its rail peer,
// or an allreduce of the group's ranks, Warmup untimed and Iters timed
// iterations, all by ctx's deadline, then checks what arrived. A failure
// drops this rank's links to the measurement's other ranks, so that no
// later measurement meets a message this one left behind: it fails at
// once instead (rank-pair isolation).
func (s *search) measure(ctx context.Context, mi int, m *measurement, peers []int, rail int) result {
	res := result{M: mi, Rail: rail, Rank: s.rank}
	g, err := group.New(s.t, peers)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	comm := coll.NewComm(g)
	n := int(s.o.Bytes)
	var args *coll.Args
	if rail >= 0 {
		for i := range s.send {
			s.send[i] = byte(s.rank + 1)
		}
		args = &coll.Args{Op: coll.SendRecv, DType: dtype.Uint8, Count: n, Send: s.send, Recv: s.recv}
	} else {
		fillInt32(s.send, int32(s.rank+1))
		args = &coll.Args{Op: coll.AllReduce, DType: dtype.Int32, RedOp: dtype.Sum, Count: n / 4, Send: s.send, Recv: s.recv}
	}
	clear(s.recv)
	var times []float64
	for i := -s.o.Warmup; i < s.o.Iters && err == nil; i++ {
		began := time.Now()
		_, err = comm.Run(ctx, coll.Auto, args)
		if i >= 0 && err == nil {
			times = append(times, time.Since(began).Seconds())
		}
	}
	if err != nil {
		res.Err = fmt.Sprintf("rank %d: %v", s.rank, err)
		why := fmt.Errorf("isolate: %w: measurement %d failed here: %s", backends.ErrPeerGone, mi+1, res.Err)
		if d, ok := s.t.(backends.LinkDropper); ok {
			for _, p := range peers {
				if p != s.rank {
					d.DropLink(p, why)
				}
			}
		}
		s.abandoned = append(s.abandoned, s.send, s.recv)
		s.newBuffers()
		return res
	}
	if rail >= 0 {
		peer := peers[0] + peers[1] - s.rank
		for _, b := range s.recv {
			if b != byte(peer+1) {
				res.Wrong++
			}
		}
	} else {
		var sum int32
		for _, r := range peers {
			sum += int32(r + 1)
		}
		for i := 0; i+4 <= len(s.recv); i += 4 {
			if int32(binary.LittleEndian.Uint32(s.recv[i:])) != sum {
				res.Wrong++
			}
		}
	}
	// The fastest iteration: what the link can carry. On a loaded host
	// the median of healthy pairs wandered by 3x (0.16 to 0.52 GB/s
	// between network namespaces of one machine), enough to hide a host
	// 100x slower behind the spread; a slow link is slow in every
	// iteration.
	res.Seconds = slices.Min(times)
	return res
}

// fillInt32 sets every int32 of b to v.
func fillInt32(b []byte, v int32) {
	for i := 0; i+4 <= len(b); i += 4 {
		binary.LittleEndian.PutUint32(b[i:], uint32(v))
	}
}
