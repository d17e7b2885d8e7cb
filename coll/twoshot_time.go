package coll

import (
	"context"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// twoshot in virtual time, in closed form. Every rank of twoshot sends
// n-1 messages twice and receives n-1, so a world of n ranks sends
// 2n(n-1) messages a call: 537 million on 16384 ranks, which no
// simulation message by message gets through. Without payload, on a
// transport that times a call for the whole world (backends.WorldTimer:
// sim on one server), every rank's clock follows from every rank's state
// in O(n) for the world, bit for bit as the messages would move it
// (TestTwoshotTimedMatchesFullSimulation), given the link model of the
// sim package comment:
//
//   - a rank whose clock reads C and whose gap allows its next message at
//     I, port free at B, posting messages of x to move one after another
//     gets its k-th out (k = 0, 1, ...) at left(k) = max(B + (k+1)x,
//     max(C, I) + x + k·max(gap, x)), arriving alpha later;
//   - rank r is the k = (r - j - 1) mod n-th receiver of rank j;
//   - a receive moves the clock to max(clock, arrival), then by its
//     reduction: the clock after a run of receives in the order j is
//     max(start + all costs, max over j of arrival(j) + the costs from j
//     on), and the costs from j on are (n - j) reductions (n - 1 from
//     rank 0's message on, which rank r > 1 only copies);
//   - the maximum of arrival(j) + costs over j < r and over j > r are a
//     prefix and a suffix maximum of terms in j alone;
//   - the receiver's ingress account In moves by x with each message it
//     waits for, which arrives no earlier than In + alpha: the m-th it
//     waits for (m = 0, 1, ...) no earlier than In + (m+1)x + alpha. Step
//     1 waits in rank order (m = j for j < r, j - 1 for j > r), so with
//     the costs from j on, the latest of these terms is at one end of
//     either run of j (linear in j), or j = 0; step 3 waits in the order
//     of arrival, and its latest term is its last, In + (n-1)x + alpha.

// timeWorld times a's call of alg for the whole world where it can (a
// backends.WorldTimer, a top-level Comm without payload, an algorithm with
// a closed form for the call) and reports whether it did.
func (c *Comm) timeWorld(ctx context.Context, alg *algorithm, a *Args) (bool, error) {
	wt, ok := c.t.(backends.WorldTimer)
	if !ok || c.parent != nil || !c.noPayload || a.RedOp == dtype.MulSum || c.size < 2 || !sameOnEveryRank(a) {
		return false, nil
	}
	if !WorldTimed(alg.op, alg.name, a.Count, c.size) {
		return false, nil
	}
	n, es := c.size, a.DType.Size()
	s := a.Count / n * es
	// In place (the input's part r is the result's), a rank after the
	// first two saves its part before rank 0's copy comes over it.
	inPlace := aliased(a.Send[c.rank*s:(c.rank+1)*s], a.Recv[c.rank*s:(c.rank+1)*s])
	avg := a.RedOp == dtype.Avg
	return wt.TimeWorld(ctx, func(l backends.LinkTimes, ranks []backends.RankTimes) bool {
		return twoshotTimes(l, ranks, s, inPlace, avg)
	})
}

// WorldTimed reports whether a call of op by the algorithm name of count
// elements on n ranks has a closed form for the whole world (timeWorld):
// twoshot's allreduce whose parts are even. Without payload on a
// transport that times a call for the whole world (sim on one server, the
// senders' ports) such a call sends no message, so it keeps no state per
// peer (the memory estimate counts none).
func WorldTimed(op Op, name string, count, n int) bool {
	return op == AllReduce && name == "twoshot" && n >= 2 && count%n == 0
}

// twoshotTimes moves every rank's state through one twoshot call of
// parts of s bytes (twoshotAllReduce), or reports false, leaving them,
// where the times could come near the clock's limit.
func twoshotTimes(l backends.LinkTimes, ranks []backends.RankTimes, s int, inPlace, avg bool) bool {
	n := len(ranks)
	x, red, cp := l.Move(s), l.Reduce(s), l.Copy(s)
	step := max(l.Gap, x)
	// Far below the limit every sum below is exact; near it the messages
	// would saturate, which only the simulation follows.
	bound := backends.ClockLimit / 8
	for _, d := range []time.Duration{x, red, cp, l.Alpha, l.Gap} {
		if d < 0 || d > bound/time.Duration(4*n) {
			return false
		}
	}
	for _, st := range ranks {
		if st.Clock > bound || st.Issue > bound || st.Busy[0] > bound || st.Waited > bound || st.In[0] > bound {
			return false
		}
	}
	nd := time.Duration(n)

	// Step 1: a direct reduce-scatter folded in rank order.
	post := make([]direct, n)
	for r, st := range ranks {
		post[r] = direct{b: st.Busy[0], j: max(st.Clock, st.Issue)}
	}
	suf := func(j int) time.Duration { // the costs from rank j's message on
		if j == 0 {
			return (nd - 1) * red
		}
		return (nd - time.Duration(j)) * red
	}
	arrive1 := latest(post, x, step, suf)
	for r := range ranks {
		st := &ranks[r]
		start := st.Clock
		if inPlace && r >= 2 {
			start += cp
		}
		end := max(start+(nd-1)*red, arrive1[r]+l.Alpha, st.In[0]+ingress1(r, n, x, suf)+l.Alpha)
		st.In[0] += (nd - 1) * x
		st.Waited += end - start - (nd-1)*red
		st.Clock = max(end, post[r].left(n-2, x, step))
		if avg {
			st.Clock += red
		}
		st.Issue = post[r].j + (nd-1)*l.Gap
		st.Busy[0] = post[r].left(n-2, x, step)
	}

	// Step 3: a direct allgather of the reduced parts.
	for r, st := range ranks {
		post[r] = direct{b: st.Busy[0], j: max(st.Clock, st.Issue)}
	}
	arrive3 := latest(post, x, step, func(int) time.Duration { return 0 })
	for r := range ranks {
		st := &ranks[r]
		end := max(st.Clock, arrive3[r]+l.Alpha, st.In[0]+(nd-1)*x+l.Alpha)
		st.In[0] += (nd - 1) * x
		st.Waited += end - st.Clock
		st.Clock = max(end, post[r].left(n-2, x, step))
		st.Issue = post[r].j + (nd-1)*l.Gap
		st.Busy[0] = post[r].left(n-2, x, step)
	}
	return true
}

// ingress1 is the latest, over the messages rank r waits for in step 1
// (from j = 0, 1, ... but r), of (m+1)x, the ingress account's move by
// the m-th of them and those before it, plus cost(j), the costs from j on.
// In each run of j (below r, above r) the term is linear in j, so its
// latest is at an end of the run; j = 0's cost is apart.
func ingress1(r, n int, x time.Duration, cost func(j int) time.Duration) time.Duration {
	term := func(j int) time.Duration {
		m := j
		if j > r {
			m = j - 1
		}
		return time.Duration(m+1)*x + cost(j)
	}
	out := time.Duration(-1 << 62)
	for _, j := range []int{0, 1, r - 1, r + 1, n - 1} {
		if j >= 0 && j < n && j != r {
			out = max(out, term(j))
		}
	}
	return out
}

// direct is a rank posting a step's messages: its port is free at b, and
// it hands out its first message at j (its clock, or a gap after its
// message before, whichever is later).
type direct struct{ b, j time.Duration }

// left is when the k-th message of d's step has left its port, each
// taking x, handed out step = max(gap, x) apart.
func (d direct) left(k int, x, step time.Duration) time.Duration {
	kd := time.Duration(k)
	return max(d.b+(kd+1)*x, d.j+x+kd*step)
}

// latest returns, for every rank r, the latest over the other ranks j of
// when j's message to r leaves j's port plus cost(j), where rank j posts
// to j+1, j+2, ... (mod n) in turn, so r is its k = (r-j-1) mod n-th.
// left(k) = max(b + (k+1)x, j + x + k·step) is linear in k, and k is r-j-1
// for j < r, r-j-1+n for j > r: the terms in j alone are maximised over a
// prefix and a suffix of the ranks.
func latest(post []direct, x, step time.Duration, cost func(j int) time.Duration) []time.Duration {
	n := len(post)
	nd := time.Duration(n)
	// tb and tj are the terms of the two sides of left in j alone:
	// left + cost = tb(j) + (r - j... ) folded into r's part below.
	tb := func(j int) time.Duration { return post[j].b - time.Duration(j)*x + cost(j) }
	tj := func(j int) time.Duration { return post[j].j - time.Duration(j)*step + cost(j) }
	const none = time.Duration(-1 << 62)
	out := make([]time.Duration, n)
	pb, pj := none, none // max over j < r
	for r := range n {
		rd := time.Duration(r)
		out[r] = none
		if pb != none {
			out[r] = max(pb+rd*x, pj+x+(rd-1)*step)
		}
		pb, pj = max(pb, tb(r)), max(pj, tj(r))
	}
	sb, sj := none, none // max over j > r
	for r := n - 1; r >= 0; r-- {
		rd := time.Duration(r)
		if sb != none {
			out[r] = max(out[r], sb+(rd+nd)*x, sj+x+(rd-1+nd)*step)
		}
		sb, sj = max(sb, tb(r)), max(sj, tj(r))
	}
	return out
}
