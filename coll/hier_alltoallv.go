package coll

import (
	"context"
	"fmt"
	"math"
)

// Two-level alltoallv (hier), aggregated per server on the rails, as
// NCCL's PXN: on a Comm with a topology of S servers of P ranks (rank
// (s, l) = s·P + l), every rank's blocks for local rank l' of any server
// first go, inside its server, to its own local rank l', which then sends
// one message to each other server's rank l' holding what all of its
// server sent there. A rank so sends P-1 messages inside its server and
// S-1 between servers, where direct sends n-P between servers: between
// servers each message pays a latency and every message a gap, so with
// many ranks and small blocks the saved messages outweigh the extra hop
// inside the server and the two copies through scratch space. With large
// blocks direct is cheaper: the bytes between servers are the same, and
// hier moves them once more inside the server and copies them twice.
//
// With one server, or one rank per server, hier is direct.

func init() {
	register(AllToAllV, hierName, hierAllToAllV, costs{levels: hierAllToAllVCost})
	setScratch(AllToAllV, hierName, hierAllToAllVScratch)
}

// rails is the geometry of hier's alltoallv for one rank: its server s
// and local rank l of S servers of P ranks, and the call's counts.
type rails struct {
	cnt        *Counts
	s, l, S, P int
}

// at returns the elements from rank (s1, l1) to rank (s2, l2).
func (g rails) at(s1, l1, s2, l2 int) int { return g.cnt.At(s1*g.P+l1, s2*g.P+l2) }

// gathered is the length of what local rank j sends to local rank lt of
// its server in step 2: its blocks for rank lt of every server, in
// server order.
func (g rails) gathered(j, lt int) (n int) {
	for s2 := range g.S {
		n += g.at(g.s, j, s2, lt)
	}
	return n
}

// railed is the length of what rank (s1, l) sends to rank (s2, l) in
// step 4: the blocks of every local rank of server s1 for rank (s2, l),
// in local-rank order.
func (g rails) railed(s1, s2 int) (n int) {
	for j := range g.P {
		n += g.at(s1, j, s2, g.l)
	}
	return n
}

// layout returns hier's scratch regions, in elements: in[j] (from local
// rank j), then out[l'] (to local rank l'), whose place the runs run[s']
// (to server s') take once step 2 has sent them, and the scratch's
// length. A uniform routing's scratch is so about twice the bytes a rank
// sends, what Comm.Reserve holds; a skewed one's can be more
// (VScratch).
func (g rails) layout() (inOff, outOff, runOff []int, end int) {
	outOff, inOff, runOff = make([]int, g.P), make([]int, g.P), make([]int, g.S)
	inEnd := 0
	for j := range g.P {
		if j != g.l {
			inOff[j] = inEnd
			inEnd += g.gathered(j, g.l)
		}
	}
	outEnd, runEnd := inEnd, inEnd
	for j := range g.P {
		if j != g.l {
			outOff[j] = outEnd
			outEnd += g.gathered(g.l, j)
		}
	}
	for s2 := range g.S {
		if s2 != g.s {
			runOff[s2] = runEnd
			runEnd += g.railed(g.s, s2)
		}
	}
	return inOff, outOff, runOff, max(outEnd, runEnd)
}

// hierAllToAllVScratch is the scratch, in elements, that hier takes on
// rank of S servers of P ranks for counts c.
func hierAllToAllVScratch(c *Counts, rank, S, P int) int {
	if S == 1 || P == 1 {
		return 0
	}
	_, _, _, end := rails{cnt: c, s: rank / P, l: rank % P, S: S, P: P}.layout()
	return end
}

// hierAllToAllV on rank (s, l):
//
//  1. pack: for each other local rank l', its blocks for (s', l') for
//     every server s', in server order (what it sends l'); its block for
//     itself into its receive buffer;
//  2. inside the server, send each local rank l' its pack and receive
//     from each local rank j its blocks for (s', l), every server s';
//  3. unpack: the blocks received for this server's rank (s, l), this
//     rank, go to their places in the receive buffer; those for (s', l)
//     on another server, and its own, to the run for s', which holds the
//     blocks of local ranks 0, 1, ..., P-1 for (s', l) one after the
//     other;
//  4. between servers, send each other server's rank l its run, and
//     receive from each other server x's rank l the blocks of x's ranks
//     for this one, in rank order: straight into the receive buffer,
//     where the blocks from ranks x·P ... x·P+P-1 lie one after the
//     other.
//
// An empty message is not sent, as in directAllToAllV. Scratch: what its
// server sends it, then the larger of its sends to its server and its
// runs (layout). A skewed routing can make that more than Comm.Reserve
// holds (a hot expert's rail carries its server's share of the hot
// bytes): VScratch says how much, for the harness to reserve and count.
func hierAllToAllV(ctx context.Context, c *Comm, a *Args) error {
	S, P := c.Topology()
	if S == 1 || P == 1 {
		return directAllToAllV(ctx, c, a)
	}
	intra, inter, err := c.levels()
	if err != nil {
		return err
	}
	g := rails{cnt: a.Counts, s: c.rank / P, l: c.rank % P, S: S, P: P}
	es, r := a.DType.Size(), c.rank
	timer := c.startReceives()
	sendSp, recvSp := a.Counts.SendSpans(r), a.Counts.RecvSpans(r)
	inOff, outOff, runOff, end := g.layout()
	scratch := c.scratchBuf(end * es)
	region := func(off, n int) []byte { return scratch[off*es : (off+n)*es] }
	// runPiece is where local rank j's block for (s2, l) sits in run s2.
	runPiece := func(s2, j int) []byte {
		off := runOff[s2]
		for k := range j {
			off += g.at(g.s, k, s2, g.l)
		}
		return region(off, g.at(g.s, j, s2, g.l))
	}

	// Step 1.
	for lt := range P {
		off := outOff[lt]
		for s2 := range S {
			d := s2*P + lt
			blk := sendSp[d].bytes(a.Send, es)
			switch {
			case len(blk) == 0:
			case d == r:
				c.copy(recvSp[r].bytes(a.Recv, es), blk)
			case lt == g.l: // step 3's, once the runs' space is free
			default:
				c.copy(region(off, sendSp[d].Len), blk)
				off += sendSp[d].Len
			}
		}
	}
	// Step 2.
	var recvs, sends inFlight
	for _, j := range others(g.l, P, -1) {
		if n := g.gathered(j, g.l); n > 0 {
			recvs = append(recvs, intra.t.Recv(j, region(inOff[j], n)))
		}
	}
	for _, lt := range others(g.l, P, +1) {
		if n := g.gathered(g.l, lt); n > 0 {
			sends = append(sends, intra.t.Send(lt, region(outOff[lt], n)))
		}
	}
	if err := intra.waitAll(ctx, append(recvs, sends...)...); err != nil {
		return fmt.Errorf("intra-server exchange: %w", err)
	}
	// Step 3.
	for s2 := range S {
		if d := s2*P + g.l; d != r && sendSp[d].Len > 0 {
			c.copy(runPiece(s2, g.l), sendSp[d].bytes(a.Send, es))
		}
	}
	for _, j := range others(g.l, P, +1) {
		off := inOff[j]
		for s2 := range S {
			k := g.at(g.s, j, s2, g.l)
			if k == 0 {
				continue
			}
			dst := runPiece(s2, j)
			if s2 == g.s {
				dst = recvSp[g.s*P+j].bytes(a.Recv, es)
			}
			c.copy(dst, region(off, k))
			off += k
		}
	}
	// Step 4.
	recvs, sends = recvs[:0], sends[:0]
	for _, s1 := range others(g.s, S, -1) {
		if n := g.railed(s1, g.s); n > 0 {
			from := recvSp[s1*P].Off
			recvs = append(recvs, inter.t.Recv(s1, a.Recv[from*es:(from+n)*es]))
		}
	}
	for _, s2 := range others(g.s, S, +1) {
		if n := g.railed(g.s, s2); n > 0 {
			sends = append(sends, inter.t.Send(s2, region(runOff[s2], n)))
		}
	}
	if err := waitRecvsSends(ctx, inter, timer, recvs, sends); err != nil {
		return fmt.Errorf("inter-server %w", err)
	}
	return nil
}

// hierAllToAllVCost, for S servers of P ranks and even blocks of b bytes:
// the packing copy of all n blocks; one direct step inside the server of
// P-1 messages of S blocks; the unpacking copy of the (P-1)·S blocks
// received; one direct step between servers of S-1 messages of P blocks.
// Both steps hand out their messages a gap apart (the links inside a
// server's: a rank has one gap, as directLevels charges). +Inf without two
// levels.
func hierAllToAllVCost(n int, b float64, m Model) float64 {
	S, P, ok := m.split(n)
	if !ok {
		return math.Inf(1)
	}
	intra, inter := m.intraLevel(), m.interLevel()
	inter.Gap = intra.gap()
	s, p := float64(S), float64(P)
	return m.copy(float64(n)*b) + directStep(P-1, s*b*intra.Beta, intra) +
		m.copy((p-1)*s*b) + directStep(S-1, p*b*inter.Beta, inter)
}
