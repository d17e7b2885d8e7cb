package bench

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// BenchmarkSimScale is the simulator at cluster scale: one sweep of 11
// sizes, 1 KiB to 1 GiB by 4, of each op with auto's algorithm, 8 ranks
// per server, without payload, as
//
//	hccl-test --backend sim --sim-data=false -p N --topology per-server=8 -b 1K -e 1G -f 4 -n 2 -w 1
//
// runs it, at growing N. ns/rank (the sweep's time over N) stays about
// level when the simulator costs linear time in ranks; B/op, with
// -benchmem, is what the sweep allocates.
func BenchmarkSimScale(b *testing.B) {
	for _, op := range []coll.Op{coll.AllReduce, coll.AllGather, coll.ReduceScatter, coll.Broadcast} {
		for _, n := range []int{1024, 4096, 16384} {
			b.Run(fmt.Sprintf("op=%s/ranks=%d", op, n), func(b *testing.B) {
				p := simScalePlan(op, n)
				for b.Loop() {
					var c capture
					if _, err := Run(context.Background(), p, &c); err != nil {
						b.Fatal(err)
					}
					if len(c.records) != 11 {
						b.Fatalf("%d rows, want 11", len(c.records))
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/rank")
			})
		}
	}
}

// simScalePlan is BenchmarkSimScale's sweep of op on n simulated ranks.
func simScalePlan(op coll.Op, n int) Plan {
	p := DefaultPlan()
	p.Backend, p.Ranks, p.NoPayload = sim.Name, n, true
	p.Ops, p.DTypes, p.RedOps = []coll.Op{op}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
	p.MinBytes, p.MaxBytes, p.StepFactor = 1<<10, 1<<30, 4
	p.Iters, p.Warmup = 2, 1
	p.Algo = coll.Auto
	p.LinkGBps, p.LinkSource = sim.DefaultLinkModel.IntraGBps, "given" // as the command sets it on sim
	p.Topology = Topology{PerServer: 8}
	return p
}

// BenchmarkSimScale16k is the simulator's scale target: 16384 simulated
// ranks of one server sweep allreduce over 11 sizes, 1 KiB to 1 GiB by 4,
// without payload, as
//
//	hccl-test --backend sim --sim-data=false -p 16384 -b 1K -e 1G -f 4 -n 2 -w 1
//
// runs it (and, for a profile on a small machine, 2048 ranks). Besides
// the time per sweep it reports the Go runtime's memory from the system
// (MemStats Sys and HeapSys, in MB) after the sweeps and the process's
// peak resident set (getrusage's maxrss, in MB): the peak of the whole
// test binary, so run one sub-benchmark per process to read it for that
// one (-bench 'SimScale16k/ranks=16384$').
func BenchmarkSimScale16k(b *testing.B) {
	for _, n := range []int{2048, 16384} {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			p := simScalePlan(coll.AllReduce, n)
			p.Topology = Topology{}
			p.Timeout = 30 * time.Minute // a loaded machine is slow, not wrong
			for b.Loop() {
				var c capture
				if _, err := Run(context.Background(), p, &c); err != nil {
					b.Fatal(err)
				}
				if len(c.records) != 11 {
					b.Fatalf("%d rows, want 11", len(c.records))
				}
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.Sys)/1e6, "sys-MB")
			b.ReportMetric(float64(ms.HeapSys)/1e6, "heapsys-MB")
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
				b.ReportMetric(float64(ru.Maxrss)/1e3, "maxrss-MB") // kilobytes on Linux
			}
		})
	}
}
