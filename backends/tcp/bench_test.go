package tcp

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
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
