package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/backendtest"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestMain fails the package's tests if they leave goroutines behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestConformance runs the conformance suite every backend passes.
func TestConformance(t *testing.T) { backendtest.Run(t, worldOn(sim.LinkModel{})) }

// worldOn returns what makes the conformance suite's worlds on m.
func worldOn(m sim.LinkModel) func(t *testing.T, n int) []backends.Transport {
	return func(t *testing.T, n int) []backends.Transport {
		w, err := sim.NewWorld(n, m)
		if err != nil {
			t.Fatal(err)
		}
		ts := make([]backends.Transport, n)
		for r := range ts {
			ts[r] = w.Endpoint(r)
		}
		return ts
	}
}

// links is the model of the timing tests: round numbers, so that every
// expected time is exact.
var links = sim.LinkModel{
	PerServer:  2,
	IntraAlpha: 2 * time.Microsecond, InterAlpha: 10 * time.Microsecond,
	IntraGBps: 50, InterGBps: 20, ReduceGBps: 10, CopyGBps: 40, Gap: time.Microsecond,
}

// at is the time n bytes take at gbps GB/s, as the model counts it.
func at(n int, gbps float64) time.Duration { return time.Duration(float64(n) / gbps) }

// runWorld runs body on every rank of a world of n ranks on m, and returns
// every rank's clock at the end.
func runWorld(t *testing.T, n int, m sim.LinkModel, body func(ctx context.Context, tr backends.Transport) error) []time.Duration {
	t.Helper()
	return runWorldFor(t, n, m, 10*time.Second, body)
}

// runWorldFor is runWorld with a deadline of timeout for the whole world.
func runWorldFor(t *testing.T, n int, m sim.LinkModel, timeout time.Duration, body func(ctx context.Context, tr backends.Transport) error) []time.Duration {
	t.Helper()
	w, err := sim.NewWorld(n, m)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	clocks := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		tr := w.Endpoint(r)
		wg.Go(func() {
			errs[r] = body(ctx, tr)
			clocks[r] = tr.(backends.Clock).Now()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return clocks
}

// waitAll waits for every request and returns the first error.
func waitAll(ctx context.Context, reqs ...backends.Request) error {
	var errs []error
	for _, r := range reqs {
		errs = append(errs, r.Wait(ctx))
	}
	return errors.Join(errs...)
}

// TestVirtualTime checks the time model on small exchanges whose times are
// known exactly (links: 2 ranks per server).
func TestVirtualTime(t *testing.T) {
	const s = 1_000_000 // a whole number of nanoseconds at every rate below
	alpha, bw := links.IntraAlpha, at(s, links.IntraGBps)
	checkClocks(t, links, []clockCase{
		{"ping-pong x3 inside a server", 2, func(ctx context.Context, tr backends.Transport) error {
			buf := make([]byte, s)
			for range 3 {
				if tr.Rank() == 0 {
					if err := waitAll(ctx, tr.Send(1, buf), tr.Recv(1, buf)); err != nil {
						return err
					}
				} else {
					if err := tr.Recv(0, buf).Wait(ctx); err != nil {
						return err
					}
					if err := tr.Send(0, buf).Wait(ctx); err != nil {
						return err
					}
				}
			}
			return nil
		}, map[int]time.Duration{
			0: 3 * 2 * (alpha + bw),   // each round trip is 2(alpha + s/bw)
			1: 3*2*(alpha+bw) - alpha, // its last reply has left, not arrived
		}},
		{"two messages queue on one port", 2, func(ctx context.Context, tr backends.Transport) error {
			a, b := make([]byte, s), make([]byte, s)
			if tr.Rank() == 0 {
				return waitAll(ctx, tr.Send(1, a), tr.Send(1, b))
			}
			err := tr.Recv(0, a).Wait(ctx)
			first := tr.(backends.Clock).Now()
			if err := errors.Join(err, tr.Recv(0, b).Wait(ctx)); err != nil {
				return err
			}
			if want := alpha + bw; first != want {
				return fmt.Errorf("first message arrived at %v, want %v", first, want)
			}
			return nil
		}, map[int]time.Duration{0: 2 * bw, 1: alpha + 2*bw}},
		{"two peers on another server share its port", 4, func(ctx context.Context, tr backends.Transport) error {
			buf := make([]byte, s)
			switch tr.Rank() {
			case 0: // to ranks 2 and 3 (server 1) one after the other, to 1 alongside
				return waitAll(ctx, tr.Send(2, buf), tr.Send(3, buf), tr.Send(1, buf[:0]))
			case 1:
				return tr.Recv(0, nil).Wait(ctx)
			}
			return tr.Recv(0, buf).Wait(ctx)
		}, map[int]time.Duration{
			0: 2 * at(s, links.InterGBps),
			1: 2*links.Gap + alpha, // the port inside the server was free, the rank two gaps on
			2: links.InterAlpha + at(s, links.InterGBps),
			3: links.InterAlpha + 2*at(s, links.InterGBps),
		}},
		{"messages posted at once leave a gap apart", 4, func(ctx context.Context, tr backends.Transport) error {
			if tr.Rank() == 0 {
				return waitAll(ctx, tr.Send(1, nil), tr.Send(2, nil), tr.Send(3, nil))
			}
			return tr.Recv(0, nil).Wait(ctx)
		}, map[int]time.Duration{
			0: 2 * links.Gap, // the last one left then
			1: alpha,
			2: links.Gap + links.InterAlpha,
			3: 2*links.Gap + links.InterAlpha,
		}},
		{"a held message keeps its port busy", 2, func(ctx context.Context, tr backends.Transport) error {
			a, b := make([]byte, s), make([]byte, s)
			const hold = 5 * time.Microsecond
			if tr.Rank() == 0 {
				lh, ok := tr.(backends.LinkHolder)
				if !ok {
					return errors.New("sim's endpoint cannot hold a message on its link")
				}
				return waitAll(ctx, lh.SendHeld(1, a, hold), tr.Send(1, b))
			}
			err := tr.Recv(0, a).Wait(ctx)
			if first, want := tr.(backends.Clock).Now(), hold+bw+alpha; err == nil && first != want {
				return fmt.Errorf("held message arrived at %v, want %v", first, want)
			}
			return errors.Join(err, tr.Recv(0, b).Wait(ctx))
		}, map[int]time.Duration{0: 5*time.Microsecond + 2*bw, 1: 5*time.Microsecond + 2*bw + alpha}},
		{"inter-server message", 4, func(ctx context.Context, tr backends.Transport) error {
			buf := make([]byte, s)
			switch tr.Rank() {
			case 1:
				return tr.Send(3, buf).Wait(ctx)
			case 3:
				return tr.Recv(1, buf).Wait(ctx)
			}
			return nil
		}, map[int]time.Duration{1: at(s, links.InterGBps), 3: links.InterAlpha + at(s, links.InterGBps)}},
		{"recv-reduce adds s/reduce", 2, func(ctx context.Context, tr backends.Transport) error {
			buf := make([]byte, s)
			if tr.Rank() == 0 {
				return tr.Send(1, buf).Wait(ctx)
			}
			return tr.RecvReduce(0, buf, buf, dtype.Reducer(dtype.FP32, dtype.Sum)).Wait(ctx)
		}, map[int]time.Duration{0: bw, 1: alpha + bw + at(s, links.ReduceGBps)}},
		{"own work: a copy, then a reduction", 2, func(ctx context.Context, tr backends.Transport) error {
			w, ok := backends.LocalWorkerOf(tr)
			if !ok {
				return errors.New("sim's endpoint charges no local work")
			}
			if tr.Rank() == 0 {
				w.Copied(s)
				w.Reduced(s)
			}
			return nil
		}, map[int]time.Duration{0: at(s, links.CopyGBps) + at(s, links.ReduceGBps), 1: 0}},
		{"own work delays what is sent after it", 2, func(ctx context.Context, tr backends.Transport) error {
			buf := make([]byte, s)
			if tr.Rank() == 0 {
				tr.(backends.LocalWorker).Copied(s)
				return tr.Send(1, buf).Wait(ctx)
			}
			return tr.Recv(0, buf).Wait(ctx)
		}, map[int]time.Duration{0: at(s, links.CopyGBps) + bw, 1: at(s, links.CopyGBps) + alpha + bw}},
		{"zero length costs alpha", 2, func(ctx context.Context, tr backends.Transport) error {
			if tr.Rank() == 0 {
				return tr.Send(1, nil).Wait(ctx)
			}
			return tr.Recv(0, nil).Wait(ctx)
		}, map[int]time.Duration{0: 0, 1: alpha}},
	})
}

// clockCase is an exchange whose clocks are known exactly.
type clockCase struct {
	name  string
	ranks int
	body  func(ctx context.Context, tr backends.Transport) error
	want  map[int]time.Duration // final clock of each rank named
}

// checkClocks runs every case on a world on m and checks its clocks.
func checkClocks(t *testing.T, m sim.LinkModel, tests []clockCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clocks := runWorld(t, tc.ranks, m, tc.body)
			for r, want := range tc.want {
				if clocks[r] != want {
					t.Errorf("rank %d: clock %v, want %v (all: %v)", r, clocks[r], want, clocks)
				}
			}
		})
	}
}

// TestWaited: the time a receiver waits for data counts as waiting; the
// reduction after it, and a sender's time on its port, do not.
func TestWaited(t *testing.T) {
	const s = 1_000_000
	w, err := sim.NewWorld(2, links)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	send, recv := w.Endpoint(0), w.Endpoint(1)
	buf := make([]byte, s)
	sr := send.Send(1, buf)
	if err := errors.Join(recv.RecvReduce(0, buf, buf, dtype.Reducer(dtype.Uint8, dtype.Max)).Wait(ctx), sr.Wait(ctx)); err != nil {
		t.Fatal(err)
	}
	if got, want := recv.(backends.WaitClock).Waited(), links.IntraAlpha+at(s, links.IntraGBps); got != want {
		t.Errorf("receiver waited %v, want %v", got, want)
	}
	if got := send.(backends.WaitClock).Waited(); got != 0 {
		t.Errorf("sender waited %v, want 0", got)
	}
}

// ringRounds is a ring exchange of varied sizes over both levels, with
// sends and receives waited on in an order that depends on the rank.
func ringRounds(ctx context.Context, tr backends.Transport) error {
	n, r := tr.Size(), tr.Rank()
	rng := rand.New(rand.NewPCG(7, 0)) // the same sizes on every rank
	for round := range 20 {
		size := rng.IntN(1 << 16)
		dist := 1 + round%(n-1)
		in, out := make([]byte, size), make([]byte, size)
		s := tr.Send((r+dist)%n, out)
		rv := tr.Recv((r-dist+n)%n, in)
		if r%2 == 0 {
			runtime.Gosched()
		}
		if err := waitAll(ctx, rv, s); err != nil {
			return err
		}
	}
	return nil
}

// TestDeterministic: the same exchanges give the same clocks, however the
// goroutines happen to interleave.
func TestDeterministic(t *testing.T) {
	first := runWorld(t, 6, links, ringRounds)
	for range 3 {
		if again := runWorld(t, 6, links, ringRounds); !slices.Equal(first, again) {
			t.Fatalf("clocks differ between runs:\n%v\n%v", first, again)
		}
	}
	if first[0] == 0 {
		t.Fatal("clocks did not move")
	}
}

// TestNewWorldRejectsBadModel: a world without ranks or with a negative
// figure in its model is refused.
func TestNewWorldRejectsBadModel(t *testing.T) {
	tests := []struct {
		name string
		n    int
		m    sim.LinkModel
	}{
		{"no ranks", 0, sim.LinkModel{}},
		{"negative alpha", 2, sim.LinkModel{IntraAlpha: -1}},
		{"negative bandwidth", 2, sim.LinkModel{InterGBps: -5}},
		{"negative per-server", 2, sim.LinkModel{PerServer: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sim.NewWorld(tc.n, tc.m); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestRunReportsFirstFailure checks that a failing rank's error is the one
// Run returns, the others being released by cancellation.
func TestRunReportsFirstFailure(t *testing.T) {
	boom := errors.New("boom")
	err := sim.Backend{}.Run(context.Background(), backends.Config{Ranks: 4}, func(ctx context.Context, tr backends.Transport) error {
		if tr.Rank() == 2 {
			return boom
		}
		return tr.Recv((tr.Rank()+1)%tr.Size(), make([]byte, 4)).Wait(ctx)
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the failing rank's error", err)
	}
}

// TestRunUsesConfigLinks: Run simulates the links of cfg.Options.
func TestRunUsesConfigLinks(t *testing.T) {
	m := sim.LinkModel{IntraAlpha: 7 * time.Microsecond}
	var got time.Duration
	err := sim.Backend{}.Run(context.Background(), backends.Config{Ranks: 2, Options: sim.Options{Links: m}}, func(ctx context.Context, tr backends.Transport) error {
		if tr.Rank() == 0 {
			return tr.Send(1, nil).Wait(ctx)
		}
		err := tr.Recv(0, nil).Wait(ctx)
		got = tr.(backends.Clock).Now()
		return err
	})
	if err != nil || got != m.IntraAlpha {
		t.Fatalf("got %v, %v; want a zero-length message to take %v", got, err, m.IntraAlpha)
	}
}
