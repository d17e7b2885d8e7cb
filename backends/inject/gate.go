package inject

import (
	"context"
	"errors"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// ErrInjected marks every error that a fault of --inject caused, so that
// reports can lead with it and name it rather than blame what it caused
// elsewhere (a peer still waiting to receive). Errors that wrap it also
// wrap the sentinel a caller branches on (backends.ErrPeerGone for a
// failed send, backends.ErrTimeout for a delay past the op's time limit).
var ErrInjected = errors.New("injected by --inject")

// Gate scopes a wrapped transport's faults to the calls a harness
// measures. Faults act only on calls begun while the gate is open (Open),
// never on the harness's own calls (its barriers, gathers, link probe and
// calibration), and a fault at call N (op:N) counts those measured calls
// only. While open, every hold of a fault (delay, bw, slow) ends when the
// context given to Open ends, and a call whose injected holds alone would
// take longer than the op's time limit fails at once, naming the fault:
// on a backend in virtual time (sim) nothing else would bound them.
//
// A Gate is used by the rank's goroutine only, between calls, as the
// transport itself is. A nil *Gate (no faults) does nothing.
type Gate struct{ w *transport }

// WrapGated returns t with spec's faults applied, as Wrap does, but only
// while the returned gate is open. It returns t itself and a nil gate for
// an empty spec.
func WrapGated(t backends.Transport, spec Spec, seed uint64) (backends.Transport, *Gate) {
	if len(spec) == 0 {
		return t, nil
	}
	wrapped := Wrap(t, spec, seed)
	w := unwrapInjector(wrapped)
	w.gated = true
	return wrapped, &Gate{w: w}
}

// unwrapInjector returns the fault injector Wrap returned.
func unwrapInjector(t backends.Transport) *transport {
	switch w := t.(type) {
	case *transport:
		return w
	case recovering:
		return w.transport
	}
	return nil
}

// Open lets faults act on the calls begun from now on: their holds end
// when ctx does, and calls whose injected holds add up to more than limit
// (0: no limit) fail at once.
func (g *Gate) Open(ctx context.Context, limit time.Duration) {
	if g == nil {
		return
	}
	g.w.open, g.w.ctx, g.w.limit = true, ctx, limit
}

// Close stops faults from acting on the calls begun from now on.
func (g *Gate) Close() {
	if g == nil {
		return
	}
	g.w.open, g.w.ctx, g.w.limit = false, nil, 0
}

// Suspend closes the gate for one of the harness's own calls and returns
// what reopens it as it was.
func (g *Gate) Suspend() (resume func()) {
	if g == nil || !g.w.open {
		return func() {}
	}
	ctx, limit := g.w.ctx, g.w.limit
	g.Close()
	return func() { g.Open(ctx, limit) }
}

// Corrupted returns how many messages this rank has corrupted so far
// (corrupt faults), which a harness compares with what its check found:
// corruption the tool injected is reported even where no check looks.
func (g *Gate) Corrupted() int64 {
	if g == nil {
		return 0
	}
	return g.w.corrupted
}
