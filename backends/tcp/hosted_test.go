package tcp

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// keepCPUs restores what Run's shareCPUs changes in this test process.
func keepCPUs(t *testing.T) {
	procs, over := runtime.GOMAXPROCS(0), oversubscribed
	t.Cleanup(func() { runtime.GOMAXPROCS(procs); oversubscribed = over })
}

// TestHostedRanks: one process hosting several ranks (nccl-tests' -t x
// -g), each its own endpoint: every rank sends its number around a ring
// and receives its left neighbour's, and each hosted rank id is seen once.
func TestHostedRanks(t *testing.T) {
	keepCPUs(t)
	for _, per := range []int{1, 3, 4} {
		t.Run(fmt.Sprint(per), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg := backends.Config{Ranks: per, Options: Options{PerProcess: per, ConnectTimeout: 10 * time.Second}}
			var mu sync.Mutex
			seen := map[int]bool{}
			err := Backend{}.Run(ctx, cfg, func(ctx context.Context, tr backends.Transport) error {
				me, n := tr.Rank(), tr.Size()
				mu.Lock()
				seen[me] = true
				mu.Unlock()
				if n != per {
					return fmt.Errorf("rank %d: size %d, want %d", me, n, per)
				}
				if n == 1 {
					return nil
				}
				got := make([]byte, 1)
				s := tr.Send((me+1)%n, []byte{byte(me)})
				if err := errors.Join(tr.Recv((me+n-1)%n, got).Wait(ctx), s.Wait(ctx)); err != nil {
					return err
				}
				if int(got[0]) != (me+n-1)%n {
					return fmt.Errorf("rank %d received %d from its left, want %d", me, got[0], (me+n-1)%n)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) != per {
				t.Errorf("ranks run: %v, want 0..%d", seen, per-1)
			}
		})
	}
}

// TestHostedRankFails: one hosted rank's failure ends its siblings and is
// the error returned, not their cancellation.
func TestHostedRankFails(t *testing.T) {
	keepCPUs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := backends.Config{Ranks: 3, Options: Options{PerProcess: 3, ConnectTimeout: 10 * time.Second}}
	boom := errors.New("rank 2 gave up")
	err := Backend{}.Run(ctx, cfg, func(ctx context.Context, tr backends.Transport) error {
		if tr.Rank() == 2 {
			return boom
		}
		// The others wait on rank 2, which never sends.
		return tr.Recv(2, make([]byte, 1)).Wait(ctx)
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want rank 2's error", err)
	}
}

func TestHostedRanksRefused(t *testing.T) {
	cfg := backends.Config{Ranks: 5, Options: Options{PerProcess: 2}}
	err := Backend{}.Run(context.Background(), cfg, func(context.Context, backends.Transport) error { return nil })
	if err == nil {
		t.Fatal("5 ranks hosted 2 to a process: no error")
	}
}
