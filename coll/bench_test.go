package coll

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
)

// BenchmarkAllReduce times one fp32 sum allreduce per size band (latency,
// cache, memory) with each algorithm, on 8 in-process ranks. The reported
// MB/s is algorithm bandwidth: the buffer size over the time of one op.
func BenchmarkAllReduce(b *testing.B) {
	const n = 8
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20, 64 << 20} {
		for _, algo := range append(Names(AllReduce), Auto) {
			b.Run(fmt.Sprintf("algo=%s/ranks=%d/size=%d", algo, n, size), func(b *testing.B) {
				benchmarkAllReduce(b, algo, n, size)
			})
		}
	}
}

func benchmarkAllReduce(b *testing.B, algo string, n, size int) {
	w := shm.NewWorld(n)
	count := size / 4
	comms := make([]*Comm, n)
	args := make([]*Args, n)
	p := dtype.Pattern{DType: dtype.FP32, Op: dtype.Sum, Ranks: n}
	for r := range n {
		comms[r] = NewComm(w.Endpoint(r))
		args[r] = &Args{Op: AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Count: count,
			Send: make([]byte, size), Recv: make([]byte, size)}
		p.Fill(args[r].Send, r, 0)
	}
	ctx := context.Background()
	run := func(iters int) {
		var wg sync.WaitGroup
		for r := range n {
			wg.Go(func() {
				for range iters {
					if _, err := comms[r].Run(ctx, algo, args[r]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	run(2) // first touch of buffers and scratch
	b.SetBytes(int64(size))
	b.ResetTimer()
	run(b.N)
}
