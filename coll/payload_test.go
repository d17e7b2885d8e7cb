package coll

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/vmem"
)

// logged is a transport that records every message a rank posts (kind,
// peer, length), passing calls on to the transport it wraps.
type logged struct {
	backends.Transport
	log []string
}

func (l *logged) BeginCall(c backends.Call) {
	if tg, ok := l.Transport.(backends.CallTagger); ok {
		tg.BeginCall(c)
	}
}

func (l *logged) Send(peer int, buf []byte) backends.Request {
	l.log = append(l.log, fmt.Sprintf("send %d %d", peer, len(buf)))
	return l.Transport.Send(peer, buf)
}

func (l *logged) Recv(peer int, buf []byte) backends.Request {
	l.log = append(l.log, fmt.Sprintf("recv %d %d", peer, len(buf)))
	return l.Transport.Recv(peer, buf)
}

func (l *logged) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	l.log = append(l.log, fmt.Sprintf("recv-reduce %d %d", peer, len(dst)))
	return l.Transport.RecvReduce(peer, dst, acc, reduce)
}

// untouchable is where the buffers of calls without payload live: address
// space that a touch crashes (on Linux).
var untouchable vmem.Region

// noPayloadBuffers lays out c's buffers as call.buffers does, but in
// untouchable memory: an algorithm that reads or writes them crashes.
func (c call) noPayloadBuffers(rank int) (send, recv []byte) {
	if c.op.Desc().Variable() {
		s, r, _ := c.vlayout(rank)
		return c.vlaid(standIn(&untouchable, s+r), rank)
	}
	b := c.count * c.dt.Size()
	sendLen, recvLen := c.lengths()
	mem := standIn(&untouchable, sendLen+recvLen)
	if !c.inPlace {
		return mem[:sendLen], mem[sendLen:]
	}
	switch c.op {
	case AllGather, Gather:
		return mem[rank*b : (rank+1)*b], mem[:recvLen]
	case ReduceScatter, Scatter:
		return mem[:sendLen], mem[rank*b : (rank+1)*b]
	}
	return mem[:sendLen], mem[:sendLen]
}

// messages runs c on a fresh shm world, with payload or without, and
// returns every rank's log of messages.
func (c call) messages(t *testing.T, noPayload bool) [][]string {
	t.Helper()
	p := dtype.Pattern{DType: c.dt, Op: c.redop, Ranks: c.ranks}
	if !c.op.Reduces() {
		p.Op = dtype.Sum
	}
	ctx, cancel := context.WithTimeout(context.Background(), callHang)
	defer cancel()
	w := shm.NewWorld(c.ranks)
	var counts *Counts
	if c.op.Desc().Variable() {
		counts = c.testCounts()
	}
	logs := make([]*logged, c.ranks)
	errs := make([]error, c.ranks)
	var wg sync.WaitGroup
	for r := range c.ranks {
		logs[r] = &logged{Transport: w.Endpoint(r)}
		send, recv := c.buffers(p, r)
		if noPayload {
			send, recv = c.noPayloadBuffers(r)
		}
		wg.Go(func() {
			comm := NewComm(logs[r])
			comm.SetNoPayload(noPayload)
			if c.algo == hierName {
				if err := comm.SetTopology(perServerFor(c.ranks)); err != nil {
					errs[r] = err
					return
				}
			}
			if errs[r] = comm.Reserve(context.Background(), len(send)+len(recv)); errs[r] != nil {
				return
			}
			_, errs[r] = comm.Run(ctx, c.algo, &Args{
				Op: c.op, DType: c.dt, RedOp: c.redop, Count: c.count, Root: c.root, Send: send, Recv: recv,
				Counts: counts,
			})
		})
	}
	wg.Wait()
	out := make([][]string, c.ranks)
	for r := range c.ranks {
		if errs[r] != nil {
			t.Fatalf("%v (no payload: %v): rank %d: %v", c, noPayload, r, errs[r])
		}
		out[r] = logs[r].log
	}
	return out
}

// perServerFor returns ranks per server for hier on n ranks: the smallest
// divisor of n above 1 that leaves more than one server, else 0 (one
// server).
func perServerFor(n int) int {
	for p := 2; p < n; p++ {
		if n%p == 0 {
			return p
		}
	}
	return 0
}

// TestNoPayload runs every algorithm of every collective without payload
// over buffers that are not backed by memory (a touch crashes the test),
// at a count that needs scratch, and checks that it posts exactly the
// messages it posts with payload: same peers, lengths and order.
func TestNoPayload(t *testing.T) {
	if !vmem.Guarded {
		t.Log("buffers are not guarded on this system: only the messages are compared")
	}
	for _, op := range AllOps() {
		// Elements: 160 KB of fp32, several segments for the chains of
		// broadcast and reduce; the other ops do not cut their blocks in
		// segments, and 40 KB keeps a block of 8 ranks' beyond shm's
		// eager messages while the 8-rank calls take a quarter of the time.
		count := 10_000
		if op == Broadcast || op == Reduce {
			count = 40_000
		}
		for _, algo := range Names(op) {
			for _, n := range []int{2, 3, 5, 8} {
				for _, inPlace := range []bool{false, true} {
					if inPlace && op.Desc().InPlace == NoInPlace {
						continue
					}
					c := call{op: op, algo: algo, ranks: n, count: count, dt: dtype.FP32, root: n - 1, inPlace: inPlace}
					if op.Reduces() {
						c.redop = dtype.Avg // the division is local work too
					}
					t.Run(c.String(), func(t *testing.T) {
						with, without := c.messages(t, false), c.messages(t, true)
						for r := range n {
							if !slices.Equal(with[r], without[r]) {
								t.Errorf("rank %d: messages differ without payload:\nwith:    %v\nwithout: %v", r, with[r], without[r])
							}
						}
					})
				}
			}
		}
	}
}

// TestNoPayloadMismatch: ranks that disagree about the payload fail with
// ErrMismatch rather than one of them reading memory that is not there.
func TestNoPayloadMismatch(t *testing.T) {
	w := shm.NewWorld(2)
	ctx, cancel := context.WithTimeout(context.Background(), callHang)
	defer cancel()
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			comm := NewComm(w.Endpoint(r))
			comm.SetNoPayload(r == 1)
			buf := make([]byte, 64)
			_, errs[r] = comm.Run(ctx, "ring", &Args{Op: AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Count: 16, Send: buf, Recv: buf})
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: no error", r)
		}
	}
	if !errors.Is(errs[0], backends.ErrMismatch) && !errors.Is(errs[1], backends.ErrMismatch) {
		t.Fatalf("no rank failed with ErrMismatch: %v", errs)
	}
}

// TestScratchGrows: scratch space is usable at every size asked for, a
// smaller request reuses it, and space it outgrew stays intact (an
// algorithm may still hold a slice of it) while the Comm lives.
func TestScratchGrows(t *testing.T) {
	c := NewComm(shm.NewWorld(1).Endpoint(0))
	fill := func(b []byte, seed int) {
		for i := range b {
			b[i] = byte(seed + i)
		}
	}
	var held [][]byte
	for k, n := range []int{1, 4 << 10, 1 << 20, 16 << 20} {
		b := c.scratchBuf(n)
		if len(b) != n {
			t.Fatalf("scratchBuf(%d): %d bytes", n, len(b))
		}
		fill(b, k)
		held = append(held, b)
	}
	if small := c.scratchBuf(100); &small[0] != &held[3][0] {
		t.Error("a smaller request did not reuse the space")
	}
	for k, b := range held {
		want := make([]byte, len(b))
		fill(want, k)
		if !slices.Equal(b, want) {
			t.Errorf("the %d-byte space changed after the Comm outgrew it", len(b))
		}
	}
	runtime.KeepAlive(c)
}
