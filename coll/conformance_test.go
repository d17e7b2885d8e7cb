package coll

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/proc"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/backends/tcp"
	"github.com/hccl-test/hccl-test/dtype"
)

// call describes one collective call to check on every rank.
type call struct {
	op      Op
	algo    string
	ranks   int
	count   int
	dt      dtype.DType
	redop   dtype.ReduceOp
	root    int
	inPlace bool
	backend string // "" (shm), "tcp" or "proc"
	hot     int    // a variable-size call's hot receiver plus 1, 0 for none (testCounts)
}

func (c call) String() string {
	place := "out"
	if c.inPlace {
		place = "in"
	}
	return fmt.Sprintf("%v/%s/n=%d/count=%d/%v/%v/root=%d/%s", c.op, c.algo, c.ranks, c.count, c.dt, c.redop, c.root, place)
}

// buffers builds rank's send and receive buffers for c following the Args
// conventions, with the send side filled from the pattern.
func (c call) buffers(p dtype.Pattern, rank int) (send, recv []byte) {
	if c.op.Desc().Variable() {
		return c.vbuffers(p, rank)
	}
	b := c.count * c.dt.Size()
	sendLen, recvLen := c.lengths()
	input := make([]byte, sendLen)
	p.Fill(input, rank, 0)
	if !c.inPlace {
		recv = make([]byte, recvLen)
		for i := range recv {
			recv[i] = 0xA5 // garbage that no pattern produces in whole elements
		}
		// Buffers that exist only on the root are absent elsewhere, so an
		// algorithm that touches them on a non-root fails here.
		if rank != c.root {
			switch c.op {
			case Broadcast, Scatter:
				input = nil
			case Reduce, Gather:
				recv = nil
			}
		}
		return input, recv
	}
	switch c.op {
	case AllGather, Gather:
		recv = make([]byte, recvLen)
		copy(recv[rank*b:], input)
		return recv[rank*b : (rank+1)*b], recv
	case ReduceScatter, Scatter:
		return input, input[rank*b : (rank+1)*b]
	default:
		return input, input
	}
}

// lengths returns the lengths of c's send and receive buffers by the
// conventions of Args.
func (c call) lengths() (send, recv int) {
	n, b := c.ranks, c.count*c.dt.Size()
	switch c.op {
	case AllGather, Gather:
		return b, n * b
	case ReduceScatter, Scatter:
		return n * b, b
	case AllToAll:
		return n * b, n * b
	}
	return b, b
}

// expected returns what rank's receive buffer must hold after c, computed
// from the pattern alone, or nil where the buffer is unspecified.
func (c call) expected(p dtype.Pattern, rank int) []byte {
	if c.op.Desc().Variable() {
		return c.vexpected(p, rank)
	}
	es, n, cnt := c.dt.Size(), c.ranks, c.count
	var vals []float64
	switch c.op {
	case AllReduce:
		for i := range cnt {
			vals = append(vals, p.Reduced(i))
		}
	case Reduce:
		if rank != c.root {
			return nil
		}
		for i := range cnt {
			vals = append(vals, p.Reduced(i))
		}
	case ReduceScatter:
		for i := range cnt {
			vals = append(vals, p.Reduced(rank*cnt+i))
		}
	case Broadcast:
		for i := range cnt {
			vals = append(vals, p.Value(c.root, i))
		}
	case SendRecv:
		for i := range cnt {
			vals = append(vals, p.Value(mod(rank-1, n), i))
		}
	case AllGather, Gather:
		if c.op == Gather && rank != c.root {
			return nil
		}
		for j := range n {
			for i := range cnt {
				vals = append(vals, p.Value(j, i))
			}
		}
	case AllToAll:
		for j := range n {
			for i := range cnt {
				vals = append(vals, p.Value(j, rank*cnt+i))
			}
		}
	case Scatter:
		for i := range cnt {
			vals = append(vals, p.Value(c.root, rank*cnt+i))
		}
	}
	out := make([]byte, len(vals)*es)
	for i, v := range vals {
		dtype.Encode(c.dt, out, i, v)
	}
	return out
}

// world starts c.ranks ranks on c's backend: shm by default, or tcp over
// loopback inside this process, or proc (shared memory between the ranks
// over tcp's world) inside this process.
func (c call) world(t *testing.T, ctx context.Context) []backends.Transport {
	t.Helper()
	if c.backend == "tcp" || c.backend == "proc" {
		newWorld := tcp.NewLocalWorld
		if c.backend == "proc" {
			newWorld = proc.NewLocalWorld
		}
		ts, err := newWorld(ctx, c.ranks, backends.Config{Options: tcp.Options{ConnectTimeout: 10 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, tr := range ts {
				tr.Close()
			}
		})
		return ts
	}
	w := shm.NewWorld(c.ranks)
	ts := make([]backends.Transport, c.ranks)
	for r := range ts {
		ts[r] = w.Endpoint(r)
	}
	return ts
}

// callHang bounds a test's call (its world's rendezvous included): a
// call still running then has hung. It is far past what a call takes on
// a quiet host, since under the race detector, with the CPUs shared with
// other work, the large calls take tens of seconds.
const callHang = 3 * time.Minute

// run executes c on a fresh world and reports every rank whose
// result differs from the expectation.
func (c call) run(t *testing.T) {
	t.Helper()
	if c.inPlace && c.op.Desc().InPlace == NoInPlace {
		return // no in-place call to check
	}
	var counts *Counts
	if c.op.Desc().Variable() {
		counts = c.testCounts()
	}
	p := dtype.Pattern{DType: c.dt, Op: c.redop, Ranks: c.ranks}
	if !c.op.Reduces() {
		p.Op = dtype.Sum
	}
	ctx, cancel := context.WithTimeout(context.Background(), callHang)
	defer cancel()
	endpoints := c.world(t, ctx)
	var wg sync.WaitGroup
	errs := make([]error, c.ranks)
	recvs := make([][]byte, c.ranks)
	for r := range c.ranks {
		send, recv := c.buffers(p, r)
		recvs[r] = recv
		wg.Go(func() {
			comm := NewComm(endpoints[r])
			used, err := comm.Run(ctx, c.algo, &Args{
				Op: c.op, DType: c.dt, RedOp: c.redop, Count: c.count, Root: c.root, Send: send, Recv: recv,
				Counts: counts,
			})
			if err == nil && c.algo != Auto && used != c.algo {
				err = fmt.Errorf("ran %q, asked for %q", used, c.algo)
			}
			errs[r] = err
		})
	}
	wg.Wait()
	for r := range c.ranks {
		if errs[r] != nil {
			t.Fatalf("%v: rank %d: %v", c, r, errs[r])
		}
		want := c.expected(p, r)
		if want == nil {
			continue
		}
		if got := recvs[r]; len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
			t.Fatalf("%v: rank %d: got\n%v\nwant\n%v", c, r, got, want)
		}
	}
}

var testRanks = []int{1, 2, 3, 4, 5, 7, 8}

// TestEveryAlgorithm runs every registered algorithm of every collective on
// every tested world size, with counts that do not divide evenly, in place and
// out of place, from every root.
func TestEveryAlgorithm(t *testing.T) {
	for _, op := range AllOps() {
		names := Names(op)
		if len(names) == 0 {
			t.Errorf("%v: no algorithm registered", op)
		}
		for _, algo := range append(names, Auto) {
			t.Run(op.String()+"/"+algo, func(t *testing.T) {
				t.Parallel()
				for _, n := range testRanks {
					roots := []int{0}
					if op.Rooted() {
						roots = roots[:0]
						for r := range n {
							roots = append(roots, r)
						}
					}
					for _, count := range []int{0, 1, 5, 33, 130} {
						for _, root := range roots {
							for _, inPlace := range []bool{false, true} {
								call{op: op, algo: algo, ranks: n, count: count, dt: dtype.FP32,
									redop: dtype.Sum, root: root, inPlace: inPlace}.run(t)
							}
						}
					}
				}
			})
		}
	}
}

// TestEveryReduction runs every reducing algorithm with every data type and
// reduction operator.
func TestEveryReduction(t *testing.T) {
	for _, op := range AllOps() {
		if !op.Reduces() {
			continue
		}
		for _, algo := range Names(op) {
			t.Run(op.String()+"/"+algo, func(t *testing.T) {
				t.Parallel()
				for _, dt := range dtype.All() {
					for _, redop := range dtype.AllOps() {
						for _, n := range []int{3, 4} {
							call{op: op, algo: algo, ranks: n, count: 19, dt: dt, redop: redop,
								root: n - 1, inPlace: dt == dtype.FP16}.run(t)
						}
					}
				}
			})
		}
	}
}

// TestLargeCounts runs Auto at a size where the default model prefers
// bandwidth algorithms.
func TestLargeCounts(t *testing.T) {
	for _, op := range AllOps() {
		t.Run(op.String(), func(t *testing.T) {
			t.Parallel()
			call{op: op, algo: Auto, ranks: 5, count: 3*(64<<10)/8 + 3, dt: dtype.BF16,
				redop: dtype.Max, root: 2}.run(t)
		})
	}
}

// TestOverTCP runs every algorithm over real sockets: the same code, another
// backend; and over proc's shared memory between ranks of tcp's world.
func TestOverTCP(t *testing.T) {
	for _, backend := range []string{"tcp", "proc"} {
		t.Run(backend, func(t *testing.T) {
			for _, op := range AllOps() {
				for _, algo := range Names(op) {
					t.Run(op.String()+"/"+algo, func(t *testing.T) {
						t.Parallel()
						for _, n := range []int{2, 3, 5} {
							for _, inPlace := range []bool{false, true} {
								call{op: op, algo: algo, ranks: n, count: 1000 + n, dt: dtype.FP16, redop: dtype.Sum,
									root: n - 1, inPlace: inPlace, backend: backend}.run(t)
							}
						}
					})
				}
			}
			// Blocks of 384 KiB, beyond a socket's default buffer.
			call{op: AllReduce, algo: "ring", ranks: 4, count: 3<<17 + 1, dt: dtype.FP32, redop: dtype.Avg, backend: backend}.run(t)
		})
	}
}

func TestChoose(t *testing.T) {
	for _, op := range AllOps() {
		small, err := Choose(op, Auto, 1024, 8, DefaultModel)
		if err != nil {
			t.Fatal(err)
		}
		large, err := Choose(op, Auto, 64<<20, 8, DefaultModel)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(Names(op), small) || !slices.Contains(Names(op), large) {
			t.Errorf("%v: auto chose %q and %q, not registered", op, small, large)
		}
	}
	if _, err := Choose(AllReduce, "no-such", 1, 2, DefaultModel); err == nil {
		t.Error("unknown algorithm accepted")
	}
}

// TestChooseFollowsModel checks that auto picks an algorithm the model
// predicts to be fastest.
func TestChooseFollowsModel(t *testing.T) {
	tests := []struct {
		name  string
		b     int
		model Model
	}{
		{"latency-bound small vector", 1024, Model{Alpha: 50e-6, Beta: 1e-9, Gamma: 1e-9}},
		{"bandwidth-bound large vector", 64 << 20, Model{Alpha: 50e-6, Beta: 1e-9, Gamma: 1e-9}},
		{"free messages", 1024, Model{Alpha: 1e-12, Beta: 1e-9, Gamma: 1e-9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Choose(AllReduce, Auto, tt.b, 8, tt.model)
			if err != nil {
				t.Fatal(err)
			}
			// The chosen one must cost no more than any other.
			for _, name := range Names(AllReduce) {
				if Predict(AllReduce, name, 8, tt.b, tt.model) < Predict(AllReduce, got, 8, tt.b, tt.model) {
					t.Errorf("chose %s, but %s is predicted faster", got, name)
				}
			}
		})
	}
}

// TestChooseMovesWithSize checks that the default model picks a
// latency-bound allreduce for small vectors and another for large ones.
func TestChooseMovesWithSize(t *testing.T) {
	small, _ := Choose(AllReduce, Auto, 1024, 8, DefaultModel)
	large, _ := Choose(AllReduce, Auto, 64<<20, 8, DefaultModel)
	if small == large {
		t.Errorf("auto chose %s for 1 KiB and 64 MiB alike", small)
	}
	if !(Predict(AllReduce, small, 8, 1024, DefaultModel) < Predict(AllReduce, "ring", 8, 1024, DefaultModel)) && small != "ring" {
		t.Errorf("auto chose %s at 1 KiB, predicted no faster than ring", small)
	}
}
