package coll

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/proc"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/backends/tcp"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/hugemem"
)

// BenchmarkAllReduceBackends times an fp32 sum allreduce (--algo auto) on
// 2 and 8 ranks of this process at 1 KiB, 1 MiB and 64 MiB, over shm (the
// ranks read each other's memory in one process), proc (the same through
// memfd segments, futex doorbells and slot rings, as between processes;
// buffers and scratch space in shared memory, as the harness allocates
// them under proc) and proc-staged (buffers on the Go heap: every send is
// first copied into a staging segment). MB/s is algorithm bandwidth.
func BenchmarkAllReduceBackends(b *testing.B) {
	for _, n := range []int{2, 8} {
		for _, size := range []int{1 << 10, 1 << 20, 64 << 20} {
			for _, backend := range []string{"shm", "proc", "proc-staged"} {
				b.Run(fmt.Sprintf("backend=%s/ranks=%d/size=%d", backend, n, size), func(b *testing.B) {
					benchmarkBackend(b, backend, n, size)
				})
			}
		}
	}
}

func benchmarkBackend(b *testing.B, backend string, n, size int) {
	ctx := context.Background()
	alloc := func(n int) []byte { return make([]byte, n) }
	var ts []backends.Transport
	switch backend {
	case "shm":
		w := shm.NewWorld(n)
		for r := range n {
			ts = append(ts, w.Endpoint(r))
		}
	default:
		if backend == "proc" {
			defer hugemem.SetAllocator(proc.Alloc)()
			alloc = func(n int) []byte {
				m, free, err := proc.Alloc(n)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(free)
				return m
			}
		}
		var err error
		ts, err = proc.NewLocalWorld(ctx, n, backends.Config{Options: tcp.Options{ConnectTimeout: 10 * time.Second}})
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			for _, t := range ts {
				t.Close()
			}
		}()
	}
	comms := make([]*Comm, n)
	args := make([]*Args, n)
	p := dtype.Pattern{DType: dtype.FP32, Op: dtype.Sum, Ranks: n}
	for r := range n {
		comms[r] = NewComm(ts[r])
		args[r] = &Args{Op: AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Count: size / 4, Send: alloc(size), Recv: alloc(size)}
		p.Fill(args[r].Send, r, 0)
	}
	run := func(iters int) {
		var wg sync.WaitGroup
		for r := range n {
			wg.Go(func() {
				for range iters {
					if _, err := comms[r].Run(ctx, Auto, args[r]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	run(2) // first touch of buffers and scratch, and the peers' mappings
	b.SetBytes(int64(size))
	b.ResetTimer()
	run(b.N)
}
