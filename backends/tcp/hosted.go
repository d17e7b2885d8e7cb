package tcp

import (
	"context"
	"errors"
	"sync"

	"github.com/hccl-test/hccl-test/backends"
)

// runHosted sets up and runs the ranks this process hosts. r is the
// process's role: its Rank is the process's index among r.Size processes,
// each hosting per ranks, so this one hosts ranks r.Rank x per to
// r.Rank x per + per - 1 of a world of r.Size x per, each its own endpoint
// that meets the others at rank 0 as a rank process would. started (nil:
// none) is called once rank 0, hosted by process 0, listens; met once
// every hosted rank's rendezvous is over. body runs once per hosted rank;
// the first failure cancels the others and is returned.
func runHosted(ctx context.Context, r role, per int, cfg backends.Config, started func(string) error, met func(), body backends.RankFunc) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base, size := r.Rank*per, r.Size*per
	eps := make([]*endpoint, per)
	var cause firstCause
	// In process 0, the other hosted ranks dial rank 0 once it listens.
	listening := make(chan struct{})
	master := r.Master
	var wg sync.WaitGroup
	for i := range per {
		me := role{Rank: base + i, Size: size, Master: r.Master, Secret: r.Secret, Backend: r.Backend}
		wg.Go(func() {
			var err error
			switch {
			case me.Rank == 0:
				eps[i], err = setup(ctx, me, cfg, func(addr string) error {
					master = addr
					close(listening)
					if started != nil {
						return started(addr)
					}
					return nil
				})
			case r.Rank == 0:
				select {
				case <-listening:
					me.Master = master
					eps[i], err = setup(ctx, me, cfg, nil)
				case <-ctx.Done():
					err = backends.ContextError(ctx)
				}
			default:
				eps[i], err = setup(ctx, me, cfg, nil)
			}
			if err != nil {
				cause.add(err)
				cancel()
			}
		})
	}
	wg.Wait()
	met()
	if cause.err != nil {
		for _, ep := range eps {
			if ep != nil {
				ep.Close()
			}
		}
		return cause.err
	}
	for _, ep := range eps {
		wg.Go(func() {
			if err := body(ctx, ep); err != nil {
				cause.add(err)
				ep.Abort(backends.StopCause(ctx, err))
				cancel()
			}
			ep.Close()
		})
	}
	wg.Wait()
	return cause.err
}

// firstCause keeps the error that came first, but a cancellation (which
// another hosted rank's failure causes) gives way to any other error.
type firstCause struct {
	mu  sync.Mutex
	err error
}

// add records err, if it is the cause so far.
func (f *firstCause) add(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil || errors.Is(f.err, context.Canceled) && !errors.Is(err, context.Canceled) {
		f.err = err
	}
}
