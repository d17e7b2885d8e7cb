package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
)

// ringProgram sends one message to the next rank and receives one from
// the one before, rounds times.
func ringProgram(rounds int, calls *int) func(t backends.Transport) error {
	return func(t backends.Transport) error {
		*calls++
		n, r := t.Size(), t.Rank()
		for range rounds {
			s := t.Send((r+1)%n, make([]byte, 64))
			q := t.Recv((r+n-1)%n, make([]byte, 64))
			if err := errors.Join(q.Wait(context.Background()), s.Wait(context.Background())); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestReplayStopsWithItsContext: a world's replay ends once its context
// has, within a few hundred ranks' recording and a few thousand steps'
// replay, not at the end of the world: a signal ends a simulated sweep
// of tens of thousands of ranks as soon as any of its messages would.
func TestReplayStopsWithItsContext(t *testing.T) {
	const n = 4096
	f, err := newFabric(n, DefaultLinkModel)
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	w, err := f.record(context.Background(), ringProgram(4, &calls), n)
	if err != nil || w == nil || calls != n {
		t.Fatalf("recorded %d ranks, err %v", calls, err)
	}
	if ok, err := f.replay(context.Background(), w); !ok || err != nil {
		t.Fatalf("replay of the ring: %v, %v", ok, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	if _, err := f.record(ctx, ringProgram(4, &calls), n); !errors.Is(err, context.Canceled) {
		t.Errorf("recording after the end: %v, want context.Canceled", err)
	}
	if calls > 256 {
		t.Errorf("recorded %d ranks after the context ended, want at most 256", calls)
	}
	w, _ = f.record(context.Background(), ringProgram(4, &calls), n)
	if ok, err := f.replay(ctx, w); ok || !errors.Is(err, context.Canceled) {
		t.Errorf("replay after the end: %v, %v, want context.Canceled", ok, err)
	}
	stepped := 0
	for _, tr := range w.traces {
		stepped += int(tr.pc - tr.ops[0])
	}
	if stepped >= 4096 {
		t.Errorf("replayed %d steps after the context ended, want fewer than 4096", stepped)
	}
}
