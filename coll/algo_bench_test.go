package coll

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkAllReduceAlgos times one fp32 sum allreduce with every allreduce
// algorithm on 2 and 8 in-process (shm) ranks, at 1 KiB, 1 MiB and 64 MiB.
// SetBytes makes the MB/s column the algorithm bandwidth. 64 MiB calls take
// a tenth of a second or more each and 8 ranks hold 1 GiB of buffers, so
// that size runs only with a small iteration count (-benchtime 20x or less),
// as in
//
//	go test -run '^$' -bench AllReduceAlgos -benchtime 10x ./coll/
func BenchmarkAllReduceAlgos(b *testing.B) {
	for _, n := range []int{2, 8} {
		for _, size := range []int{1 << 10, 1 << 20, 64 << 20} {
			for _, algo := range Names(AllReduce) {
				b.Run(fmt.Sprintf("ranks=%d/size=%d/algo=%s", n, size, algo), func(b *testing.B) {
					if size > 1<<20 && !fewIterations() {
						b.Skip("64 MiB runs only with -benchtime Nx, N <= 20")
					}
					benchmarkAllReduce(b, algo, n, size)
				})
			}
		}
	}
}

// fewIterations reports whether -benchtime asks for a fixed count of at
// most 20 iterations.
func fewIterations() bool {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return false
	}
	count, ok := strings.CutSuffix(f.Value.String(), "x")
	if !ok {
		return false
	}
	iters, err := strconv.Atoi(count)
	return err == nil && iters <= 20
}
