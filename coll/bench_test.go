package coll

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

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
	cpu := processCPU(b)
	run(b.N)
	// The process's CPU time per op, spin included: on a loaded host it
	// varies less than the wall time, which waits for a processor too.
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the user and system time the process has used.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkChoose is what naming the algorithm of a call costs: forced, by
// auto through the process's shared picks (Choose), and by auto on a Comm
// that remembers its latest pick, as every call of a row finds it.
func BenchmarkChoose(b *testing.B) {
	m := DefaultModel
	m.Cores = 2
	c := &Comm{size: 8, model: m}
	for _, bc := range []struct {
		name   string
		choose func() (string, error)
	}{
		{"forced", func() (string, error) { return Choose(AllReduce, "ring", 1024, 8, m) }},
		{"auto", func() (string, error) { return Choose(AllReduce, Auto, 1024, 8, m) }},
		{"auto-comm", func() (string, error) { return c.choose(AllReduce, Auto, 1024) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := bc.choose(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAllReduce2Ranks1KiB is the per-call path of the smallest row
// of a shm run: auto's pick for a 1 KiB fp32 sum on 2 in-process ranks.
// With -benchmem it counts the allocations a call makes on each rank.
func BenchmarkAllReduce2Ranks1KiB(b *testing.B) {
	b.ReportAllocs()
	benchmarkAllReduce(b, Auto, 2, 1<<10)
}

// BenchmarkCallOverhead is what a call costs apart from its messages: a
// 1 KiB allreduce on a world of one rank, which copies its input and
// sends nothing, through the whole per-call path (checks, the algorithm's
// choice, the call's tags and bookkeeping).
func BenchmarkCallOverhead(b *testing.B) {
	b.ReportAllocs()
	benchmarkAllReduce(b, "oneshot", 1, 1<<10)
}
