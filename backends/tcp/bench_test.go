package tcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// BenchmarkPingPong measures one round trip between two ranks of this
// process over loopback: the backend's latency (small sizes) and
// bandwidth (large sizes). MB/s counts the bytes of one direction.
func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{8, 1 << 10, 64 << 10, 1 << 20, 16 << 20} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			ctx := context.Background()
			eps, err := NewLocalWorld(ctx, 2, backends.Config{Options: Options{ConnectTimeout: 10 * time.Second}})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				for _, ep := range eps {
					ep.Close()
				}
			}()
			bufs := [2][]byte{make([]byte, size), make([]byte, size)}
			round := func(me int) error {
				if me == 0 {
					if err := eps[0].Send(1, bufs[0]).Wait(ctx); err != nil {
						return err
					}
					return eps[0].Recv(1, bufs[0]).Wait(ctx)
				}
				if err := eps[1].Recv(0, bufs[1]).Wait(ctx); err != nil {
					return err
				}
				return eps[1].Send(0, bufs[1]).Wait(ctx)
			}
			var wg sync.WaitGroup
			run := func(n int) {
				for me := range 2 {
					wg.Go(func() {
						for range n {
							if err := round(me); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
			}
			run(3) // connects the pair and touches the buffers
			b.SetBytes(int64(size))
			b.ResetTimer()
			run(b.N)
		})
	}
}

// BenchmarkExchange measures what a 2-rank allreduce step costs over
// loopback: both ranks send their buffer and receive-and-reduce (fp32
// sum) the other's at once, then wait for both, and release the requests
// as coll does. MB/s counts the bytes one rank receives; p50-ns/op is
// rank 0's median step, which a shared machine's other work disturbs less
// than the mean; cpu-ns/op is the CPU time the process spent a step, user
// and system, both ranks together: what a step costs where ranks
// outnumber CPUs. Both ranks live in
// this process, sharing its processors, where hccl-test runs each rank in
// a process of its own: large sizes are left to the command's own runs.
func BenchmarkExchange(b *testing.B) {
	sum := dtype.Reducer(dtype.FP32, dtype.Sum)
	for _, size := range []int{1 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			ctx := context.Background()
			eps, mem := localPair(ctx, b, size)
			var took []time.Duration
			run := func(n int) {
				took = make([]time.Duration, n)
				var wg sync.WaitGroup
				for me := range 2 {
					wg.Go(func() {
						base := time.Now()
						for i := range n {
							t0 := time.Since(base)
							s := eps[me].Send(1-me, mem[me].src)
							r := eps[me].RecvReduce(1-me, mem[me].dst, mem[me].acc, sum)
							if err := errors.Join(r.Wait(ctx), s.Wait(ctx)); err != nil {
								b.Error(err)
								return
							}
							if rel, ok := eps[me].(backends.Releaser); ok {
								rel.Release(r) // as coll's waitAll does
								rel.Release(s)
							}
							if me == 0 {
								took[i] = time.Since(base) - t0
							}
						}
					})
				}
				wg.Wait()
			}
			run(3) // connects the pair and touches the buffers
			b.SetBytes(int64(size))
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			b.ResetTimer()
			run(b.N)
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2]), "p50-ns/op")
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime returns the CPU time this process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pairBufs is one rank's buffers in an exchange: what it sends, where it
// receives, and the accumulator of a receive-and-reduce.
type pairBufs struct{ src, dst, acc []byte }

// localPair starts two ranks over loopback, closed when tb ends, and
// makes each its buffers of size bytes.
func localPair(ctx context.Context, tb testing.TB, size int) ([]backends.Transport, [2]pairBufs) {
	tb.Helper()
	eps, err := NewLocalWorld(ctx, 2, backends.Config{Options: Options{ConnectTimeout: 10 * time.Second}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		for _, ep := range eps {
			ep.Close()
		}
	})
	var mem [2]pairBufs
	for r := range mem {
		mem[r] = pairBufs{make([]byte, size), make([]byte, size), make([]byte, size)}
	}
	return eps, mem
}

// socketPair returns the two ends of a loopback TCP connection, closed
// when the test ends.
func socketPair(t *testing.T) (in, out net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	in, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in, out
}
