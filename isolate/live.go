package isolate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/world"
)

// LiveOptions are the choices of a live search.
type LiveOptions struct {
	// World is where the search runs, as a sweep's: Backend, Ranks,
	// Master, Bind, ConnectTimeout, Args (which must make a rank process
	// run the same search) and Log. Timeout is the limit of ONE
	// measurement: slot k of the search ends k+1 limits after it began.
	world.World
	// Bytes is the size of every measurement: each rank's sendrecv
	// buffer, each rank's allreduce buffer (a multiple of 4).
	Bytes int64
	// Iters and Warmup are the timed and untimed iterations of each.
	Iters, Warmup int
	// PerHost, when above 0, counts ranks as hosts, PerHost to a host
	// in rank order (host0, host1, ...), in place of the hosts the
	// transport reports (for a world on one machine).
	PerHost int
	// Rule is the verdict rule, as for logs.
	Rule Config
}

// Limits of LiveOptions.
const (
	MaxLiveBytes = 1 << 30
	MaxIters     = 10000
	MaxWarmup    = 1000
)

// DefaultLiveOptions is 8 MiB, 5 iterations after 1 warm-up, a limit of
// 30 s a measurement, on tcp.
func DefaultLiveOptions() LiveOptions {
	return LiveOptions{World: world.World{Backend: "tcp", Timeout: 30 * time.Second, LaunchedRank: -1},
		Bytes: 8 << 20, Iters: 5, Warmup: 1, Rule: DefaultConfig()}
}

// Validate says what is wrong with o's own fields (the world's are
// checked by world.World).
func (o LiveOptions) Validate() error {
	switch {
	case o.Bytes < 4 || o.Bytes > MaxLiveBytes || o.Bytes%4 != 0:
		return fmt.Errorf("size %d: want a multiple of 4 bytes from 4 to %d (1 GiB)", o.Bytes, MaxLiveBytes)
	case o.Iters < 1 || o.Iters > MaxIters:
		return fmt.Errorf("iters %d: want 1 to %d timed iterations", o.Iters, MaxIters)
	case o.Warmup < 0 || o.Warmup > MaxWarmup:
		return fmt.Errorf("warmup-iters %d: want 0 to %d", o.Warmup, MaxWarmup)
	case o.Timeout <= 0:
		return fmt.Errorf("timeout %v: a live search needs a limit for each measurement", o.Timeout)
	case o.PerHost < 0:
		return fmt.Errorf("per-host %d: want a number of ranks, or 0 for the hosts the transport reports", o.PerHost)
	case o.PerHost > 0 && o.Ranks > 0 && (o.Ranks%o.PerHost != 0 || o.Ranks/o.PerHost < 2):
		return fmt.Errorf("per-host %d: the %d ranks must make 2 hosts or more of %d ranks each", o.PerHost, o.Ranks, o.PerHost)
	case o.Timeout > time.Duration(math.MaxInt64)/time.Duration(4*o.Ranks+8):
		return fmt.Errorf("timeout %v: too long for the search's %d ranks to add up its slots", o.Timeout, o.Ranks)
	}
	return o.Rule.Validate()
}

// RunLive runs the search in one world on o's backend. The process that
// hosts rank 0 gets the report; other processes get nil. An error is a
// world that could not start or agree, or a rank 0 that could not finish
// (its own host gone): a measurement that fails is in the report.
func RunLive(ctx context.Context, o LiveOptions) (*LiveReport, error) {
	b, err := o.Resolve()
	if err != nil {
		return nil, fmt.Errorf("--backend: %w", err)
	}
	var (
		rep    *LiveReport
		keptMu sync.Mutex // guards kept
		// kept holds every rank's search until the world has ended: a
		// receive abandoned at its deadline may be filled until the
		// transport closes, so its buffer must stay.
		kept []*search
	)
	began := time.Now()
	err = b.Run(ctx, o.Config(backends.WorldLinks{}, false), func(ctx context.Context, t backends.Transport) error {
		if runctl.NeedsAgreement(b, t.Size()) {
			if err := runctl.AgreeOn(ctx, t, o.Timeout, liveFields(o)); err != nil {
				return err
			}
		}
		s, err := newSearch(o, t)
		if err != nil {
			return fmt.Errorf("isolate, world rank %d: %w", t.Rank(), err)
		}
		keptMu.Lock()
		kept = append(kept, s)
		keptMu.Unlock()
		res, err := s.run(ctx)
		if err != nil {
			return fmt.Errorf("isolate, world rank %d: %w", t.Rank(), err)
		}
		if t.Rank() == 0 {
			rep = res
		}
		return nil
	})
	runtime.KeepAlive(kept)
	if err != nil {
		return nil, err
	}
	if rep != nil {
		rep.Wall = time.Since(began)
	}
	return rep, nil
}

// liveFields are the settings every rank must share.
func liveFields(o LiveOptions) []string {
	f := func(name string, v any) string { return fmt.Sprintf("%s=%v", name, v) }
	return []string{f("version", runctl.Version), f("command", "isolate"), f("backend", o.Backend), f("bytes", o.Bytes),
		f("iters", o.Iters), f("warmup", o.Warmup), f("per-host", o.PerHost), f("timeout", o.Timeout)}
}
