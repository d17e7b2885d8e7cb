package coll

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
)

// peerCounter is a transport that notes every peer its rank posts a
// message to or from.
type peerCounter struct {
	backends.Transport
	mu    sync.Mutex
	peers map[int]bool
}

func (p *peerCounter) note(peer int) {
	p.mu.Lock()
	p.peers[peer] = true
	p.mu.Unlock()
}

func (p *peerCounter) Send(peer int, buf []byte) backends.Request {
	p.note(peer)
	return p.Transport.Send(peer, buf)
}

func (p *peerCounter) Recv(peer int, buf []byte) backends.Request {
	p.note(peer)
	return p.Transport.Recv(peer, buf)
}

func (p *peerCounter) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	p.note(peer)
	return p.Transport.RecvReduce(peer, dst, acc, reduce)
}

// countedPeers runs one call of c on every rank of a world of c.ranks on
// servers of perServer ranks (0: one level) and returns the most peers
// one rank exchanged messages with.
func countedPeers(t *testing.T, c call, perServer int) int {
	t.Helper()
	w := shm.NewWorld(c.ranks)
	ctx, cancel := context.WithTimeout(context.Background(), callHang)
	defer cancel()
	pat := dtype.Pattern{DType: c.dt, Op: c.redop, Ranks: c.ranks}
	counters := make([]*peerCounter, c.ranks)
	errs := make([]error, c.ranks)
	var wg sync.WaitGroup
	for r := range c.ranks {
		counters[r] = &peerCounter{Transport: w.Endpoint(r), peers: map[int]bool{}}
		wg.Go(func() {
			comm := NewComm(counters[r])
			if perServer > 0 {
				if errs[r] = comm.SetTopology(perServer); errs[r] != nil {
					return
				}
			}
			send, recv := c.buffers(pat, r)
			var counts *Counts
			if c.op.Desc().Variable() {
				counts = c.testCounts()
			}
			_, errs[r] = comm.Run(ctx, c.algo, &Args{Op: c.op, DType: c.dt, RedOp: c.redop, Count: c.count,
				Root: c.root, Send: send, Recv: recv, Counts: counts})
		})
	}
	wg.Wait()
	most := 0
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%v perServer=%d: rank %d: %v", c, perServer, r, err)
		}
		most = max(most, len(counters[r].peers))
	}
	return most
}

// TestAlgoPeersCoverCounted checks the peers the memory estimate counts
// for a rank (AlgoPeers, each a link's state) against the peers counted
// from every algorithm's messages, on one level and on two: at least as
// many, and for an algorithm said to be direct, every other rank (a
// variable-size one's counts may leave some out).
func TestAlgoPeersCoverCounted(t *testing.T) {
	const n = 32
	for _, op := range AllOps() {
		for _, name := range Names(op) {
			for _, perServer := range []int{0, 8} {
				c := call{op: op, algo: name, ranks: n, count: 4 * n, dt: dtype.FP32, redop: dtype.Sum, root: 1}
				t.Run(fmt.Sprintf("%v/perServer=%d", c, perServer), func(t *testing.T) {
					got := countedPeers(t, c, perServer)
					est := AlgoPeers(op, []string{name}, n)
					if est < got {
						t.Errorf("AlgoPeers = %d, but a rank exchanged with %d peers", est, got)
					}
					if directAlgos[replayKey{op, name}] && !op.Desc().Variable() && got != n-1 {
						t.Errorf("direct, but a rank exchanged with at most %d peers of %d", got, n-1)
					}
					if auto := AlgoPeers(op, []string{Auto}, n); auto < got {
						t.Errorf("AlgoPeers(auto) = %d, but %s's rank exchanged with %d peers", auto, name, got)
					}
				})
			}
		}
	}
}

// TestWorldTimed checks which calls the memory estimate counts no peers
// for, as timeWorld times them in closed form: twoshot's allreduce whose
// parts are even, nothing else.
func TestWorldTimed(t *testing.T) {
	for _, tc := range []struct {
		op         Op
		name       string
		count, n   int
		worldTimed bool
	}{
		{AllReduce, "twoshot", 1 << 20, 1024, true},
		{AllReduce, "twoshot", 1024*3 + 1, 1024, false},
		{AllReduce, "twoshot", 8, 1, false},
		{AllReduce, "oneshot", 1 << 20, 1024, false},
		{AllReduce, "rhd", 1 << 20, 1024, false},
		{ReduceScatter, "direct", 1 << 20, 1024, false},
	} {
		if got := WorldTimed(tc.op, tc.name, tc.count, tc.n); got != tc.worldTimed {
			t.Errorf("WorldTimed(%v, %s, %d, %d) = %v, want %v", tc.op, tc.name, tc.count, tc.n, got, tc.worldTimed)
		}
	}
}
