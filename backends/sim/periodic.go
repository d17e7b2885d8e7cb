package sim

import (
	"context"
	"math"

	"github.com/hccl-test/hccl-test/backends"
)

// Periodic worlds. Renaming every rank r to r+P (mod n), where P ranks
// fill a server and n is a multiple of P, maps servers onto servers, so
// every pair's link onto a link of the same level. Where every rank's
// program is, renamed so, the program of the rank P before it (multiring's
// channels on servers of P ranks, whose rings are laid out server by
// server) and the ranks start the call alike server by server (every
// rank's clock, ports and gap those of the rank in its place on the first
// server, as after the barrier that starts a row), every rank's messages
// are timed as those of the rank in its place on the first server: rank
// q's k-th message to r is rank q-P's k-th to r-P, booked alike. So the
// replay records and replays the first server's ranks alone, and a
// receive from rank q of another server is matched with the send of the
// rank in q's place on the first server to the receiver renamed alike
// (records.rename); every rank takes the outcome of the rank in its
// place, bit for bit the figures of the whole world's replay, for the
// records and the replay of one server's messages instead of the world's.
// Every other rank's program is still run once, on a recorder that keeps
// nothing and compares it, request by request, with the recorded one
// renamed (recorder.periodic): a single difference, and the world is
// recorded whole, as without a period.

// periodOf returns the period of the world for a call whose ranks start
// in states all (as RunWorld meets them): the ranks per server where the
// world has several servers of that many ranks each, messages move on
// ports, and every rank's state but its time waited is bit for bit that
// of the rank in its place on the first server; else the world's size.
func (f *fabric) periodOf(all [][]float64) int {
	p := f.links.PerServer
	if f.links.Pull || p <= 0 || p >= f.size || f.size%p != 0 || len(all) != f.size {
		return f.size
	}
	for r := p; r < f.size; r++ {
		v, w := all[r], all[r%p]
		if len(v) != rankTimesLen || len(w) != rankTimesLen {
			return f.size
		}
		for i := range v {
			if i != 1 && math.Float64bits(v[i]) != math.Float64bits(w[i]) { // 1: waited, the rank's own
				return f.size
			}
		}
	}
	return p
}

// rename returns, for rank r's receive from peer, the recorded rank whose
// sends stand for peer's, and the rank whose receives from it stand for
// r's: peer and r themselves where the whole world is recorded, else both
// renamed by the start of peer's server.
func (w *records) rename(peer, r, size int) (from int, to int32) {
	from = peer % w.period
	off := peer - from
	return from, int32((r - off + size) % size)
}

// checking is the state of a recorder while it checks a rank's program
// against the recorded program of the rank in its place on the first
// server (periodic) instead of recording it.
type checking struct {
	// check is that rank's trace, off the start of the checked rank's
	// server, pc and next the op and request the checked program's next
	// step must repeat.
	check    *trace
	off      int
	pc, next int32
	// differs is set at the first step that does not repeat it.
	differs bool
	// handed are the checked rank's requests, reused rank after rank:
	// its k-th request is handed[k].
	handed []recorded
}

// periodic checks, after the first period ranks' programs were recorded,
// that every other rank's program repeats that of the rank in its place
// on the first server, its peers renamed by the start of its server; it
// stops at the first rank whose program does not (false). It keeps
// nothing of them: the memory is that of the recorded ranks, whatever the
// world's size. An error only when ctx ended.
func (c *recorder) periodic(ctx context.Context, run func(t backends.Transport) error, period int) (bool, error) {
	defer func() { c.checking, c.failed = checking{handed: c.handed}, false }()
	for r := period; r < c.f.size; r++ {
		// Each rank, not each 256 as when recording: a rank of a
		// periodic world may post tens of thousands of requests.
		if err := ctx.Err(); err != nil {
			return false, backends.ContextError(ctx)
		}
		t := &c.w.traces[r%period]
		c.checking = checking{check: t, off: r - r%period, pc: t.ops[0], next: t.reqs[0], handed: c.handed}
		if n := int(t.reqs[1] - t.reqs[0]); len(c.handed) < n {
			c.handed = make([]recorded, n)
		}
		c.rank = r
		err := run(c)
		if err != nil || c.failed || c.differs || c.pc != t.ops[1] || c.next != t.reqs[1] {
			return false, nil
		}
	}
	return true, nil
}

// verify compares a request the checked program posts with the recorded
// program's next one, renamed: of the same kind, length and reduction, to
// or from the recorded peer moved by the start of the checked rank's
// server. It fails the request where they differ, which ends the program.
func (c *recorder) verify(q replayReq) backends.Request {
	i := c.next
	if c.differs || i >= c.check.reqs[1] {
		c.differs = true
		return failed{errReplay}
	}
	want := &c.w.reqs[i]
	if q.send != want.send || int(q.peer) != (int(want.peer)+c.off)%c.f.size || q.n != want.n || q.reduces != want.reduces {
		c.differs = true
		return failed{errReplay}
	}
	if c.expect(op{kind: opPost, req: i}); c.differs {
		return failed{errReplay}
	}
	c.next++
	r := &c.handed[i-c.check.reqs[0]]
	r.c, r.i = c, i
	return r
}

// expect compares o, a step of the checked program, with the recorded
// program's next step.
func (c *recorder) expect(o op) {
	if c.differs || c.pc >= c.check.ops[1] || c.w.ops[c.pc] != o {
		c.differs = true
		return
	}
	c.pc++
}
