package tcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hccl-test/hccl-test/backends"
)

// NewLocalWorld sets up n ranks inside this process, each with its own
// endpoint over loopback TCP, exactly as n rank processes would: a
// rendezvous at rank 0, the handshake, links made on first use. It is meant
// for tests that run collectives over real sockets without starting
// processes. Close every transport when done.
func NewLocalWorld(ctx context.Context, n int, cfg backends.Config) ([]backends.Transport, error) {
	cfg.Ranks = n
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	secret := newSecret()
	eps := make([]*endpoint, n)
	errs := make([]error, n)
	master := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		eps[0], errs[0] = setup(ctx, role{Rank: 0, Size: n, Master: "127.0.0.1:0", Secret: secret}, cfg,
			func(m string) error { master <- m; return nil })
		close(master)
	})
	if m, ok := <-master; ok {
		for r := 1; r < n; r++ {
			wg.Go(func() {
				eps[r], errs[r] = setup(ctx, role{Rank: r, Size: n, Master: m, Secret: secret}, cfg, nil)
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, ep := range eps {
			if ep != nil {
				ep.Close()
			}
		}
		return nil, fmt.Errorf("local tcp world of %d: %w", n, err)
	}
	ts := make([]backends.Transport, n)
	for i, ep := range eps {
		ts[i] = ep
	}
	return ts, nil
}
