package shm_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
)

// BenchmarkExchange measures one step of a ring: every rank sends its
// buffer to its right neighbour while receiving and reducing (fp32 sum)
// its left neighbour's, then waits for both. At 2 ranks and small sizes it
// is the hand-off between two goroutines that a one-shot allreduce costs;
// at 8 ranks on fewer processors, ranks park and are woken. MB/s counts
// the bytes one rank receives.
func BenchmarkExchange(b *testing.B) {
	sum := dtype.Reducer(dtype.FP32, dtype.Sum)
	for _, ranks := range []int{2, 8} {
		for _, size := range []int{1 << 10, 1 << 20, 64 << 20} {
			if ranks == 8 && size == 64<<20 {
				continue // 1.5 GiB of buffers; the 2-rank row shows the bandwidth
			}
			b.Run(fmt.Sprintf("ranks=%d/size=%d", ranks, size), func(b *testing.B) {
				exchange(b, ranks, size, sum)
			})
		}
	}
}

func exchange(b *testing.B, ranks, size int, sum dtype.ReduceFunc) {
	ctx := context.Background()
	w := shm.NewWorld(ranks)
	type bufs struct{ src, dst, acc []byte }
	mem := make([]bufs, ranks)
	for r := range mem {
		mem[r] = bufs{make([]byte, size), make([]byte, size), make([]byte, size)}
	}
	eps := make([]backends.Transport, ranks)
	for r := range eps {
		eps[r] = w.Endpoint(r)
	}
	step := func(r int) error {
		ep := eps[r]
		right, left := (r+1)%ranks, (r+ranks-1)%ranks
		s := ep.Send(right, mem[r].src)
		rr := ep.RecvReduce(left, mem[r].dst, mem[r].acc, sum)
		if err := rr.Wait(ctx); err != nil {
			return err
		}
		return s.Wait(ctx)
	}
	// Rank 0 times each of its steps too: on a shared machine the median
	// step shows the hand-off itself, where the mean also counts the
	// steps another process's work delayed.
	var took []time.Duration
	run := func(n int) {
		var wg sync.WaitGroup
		took = make([]time.Duration, n)
		for r := range ranks {
			wg.Go(func() {
				base := time.Now()
				for i := range n {
					t0 := time.Since(base)
					if err := step(r); err != nil {
						b.Error(err)
						return
					}
					if r == 0 {
						took[i] = time.Since(base) - t0
					}
				}
			})
		}
		wg.Wait()
	}
	run(3) // makes the links and touches the buffers
	b.SetBytes(int64(size))
	b.ResetTimer()
	run(b.N)
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2]), "p50-ns/op")
}

// BenchmarkHandoff measures the floors under BenchmarkExchange at 2 ranks:
// one round trip between two goroutines through a polled atomic counter
// (what a rank polling its link costs at best), through channels (a
// parked goroutine woken by another), and with yields between polls.
func BenchmarkHandoff(b *testing.B) {
	b.Run("atomic-spin", func(b *testing.B) {
		var turn atomic.Int64
		pingPong(b, func(want int64) {
			for turn.Load() != want {
			}
		}, func(v int64) { turn.Store(v) })
	})
	b.Run("atomic-gosched", func(b *testing.B) {
		var turn atomic.Int64
		pingPong(b, func(want int64) {
			for turn.Load() != want {
				runtime.Gosched()
			}
		}, func(v int64) { turn.Store(v) })
	})
	b.Run("channel", func(b *testing.B) {
		ping, pong := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for range b.N {
				<-ping
				pong <- struct{}{}
			}
		})
		b.ResetTimer()
		for range b.N {
			ping <- struct{}{}
			<-pong
		}
		wg.Wait()
	})
}

// pingPong runs b.N round trips: the benchmark's goroutine publishes an
// odd value and waits for the next even one, a helper answers.
func pingPong(b *testing.B, await func(int64), publish func(int64)) {
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range int64(b.N) {
			await(2*i + 1)
			publish(2*i + 2)
		}
	})
	b.ResetTimer()
	for i := range int64(b.N) {
		publish(2*i + 1)
		await(2*i + 2)
	}
	wg.Wait()
}
