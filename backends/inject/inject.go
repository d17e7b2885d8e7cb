package inject

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/limits"
)

// Wrap returns t with spec's faults applied to what this rank sends, with
// random choices drawn from seed (and the rank, so ranks differ). It
// returns t itself for an empty spec.
func Wrap(t backends.Transport, spec Spec, seed uint64) backends.Transport {
	if len(spec) == 0 {
		return t
	}
	w := &transport{Transport: t, spec: spec, rng: rand.New(rand.NewPCG(seed, uint64(t.Rank()))),
		fired: make([]bool, len(spec))}
	w.holder, _ = backends.HolderOf(t)
	if rec, ok := t.(backends.Recoverer); ok {
		return recovering{w, rec}
	}
	return w
}

// transport applies the faults. It is used by its rank's goroutine only,
// as every Transport is, so it needs no lock.
type transport struct {
	backends.Transport
	spec  Spec
	rng   *rand.Rand
	call  backends.Call
	fired []bool // faults at a given call that have fired
	// holder charges holds to the rank's virtual clock on a backend that
	// has one (sim); nil: holds pass in wall time.
	holder backends.Holder
}

// BeginCall implements backends.CallTagger: it keeps the call's number for
// faults at a given call, makes a slow rank late, and passes the call on.
func (w *transport) BeginCall(c backends.Call) {
	w.call = c
	for _, f := range w.spec {
		if f.Kind == Slow && f.From == w.Rank() {
			w.hold(f.Min)
		}
	}
	if tg, ok := w.Transport.(backends.CallTagger); ok {
		tg.BeginCall(c)
	}
}

// Send applies the faults that match a message from this rank to peer:
// it holds the message for delays and bandwidth limits (on its link where
// the transport can, backends.LinkHolder; else by holding the rank),
// corrupts a copy, or fails the send.
func (w *transport) Send(peer int, buf []byte) backends.Request {
	me := w.Rank()
	var hold time.Duration
	for i, f := range w.spec {
		if !f.matches(me, peer) {
			continue
		}
		switch f.Kind {
		case Delay:
			hold = limits.AddDurations(hold, f.Min)
			if f.Max > f.Min {
				hold = limits.AddDurations(hold, time.Duration(w.rng.Int64N(int64(f.Max-f.Min+1))))
			}
		case Bandwidth:
			// Saturates: 1 PiB at 1 B/s is past what a Duration holds.
			hold = limits.AddDurations(hold, limits.DurationOf(float64(len(buf))/f.Rate))
		case Fail:
			if w.hit(i, f) {
				return w.fail(peer, buf)
			}
		case Corrupt:
			if len(buf) > 0 && w.hit(i, f) {
				buf = bytes.Clone(buf)
				buf[w.rng.IntN(len(buf))] ^= 1 << w.rng.IntN(8)
			}
		}
	}
	if hold > 0 {
		if lh, ok := w.Transport.(backends.LinkHolder); ok {
			return lh.SendHeld(peer, buf, hold)
		}
		w.hold(hold)
	}
	return w.Transport.Send(peer, buf)
}

// hit reports whether fault i fires for this message.
func (w *transport) hit(i int, f Fault) bool {
	if f.Call > 0 {
		if w.call.Seq != f.Call || w.fired[i] {
			return false
		}
		w.fired[i] = true
		return true
	}
	return w.rng.Float64() < f.Prob
}

// fail fails a send to peer: by dropping the connection where the backend
// can, else by failing the transfer on this side.
func (w *transport) fail(peer int, buf []byte) backends.Request {
	err := fmt.Errorf("%w: injected failure of a send from rank %d to rank %d in op #%d",
		backends.ErrPeerGone, w.Rank(), peer, w.call.Seq)
	if d, ok := w.Transport.(backends.LinkDropper); ok {
		d.DropLink(peer, err)
		return w.Transport.Send(peer, buf)
	}
	return failed{err}
}

// RunNative passes whole collectives on when the backend has its own.
func (w *transport) RunNative(ctx context.Context, call backends.NativeCall) error {
	if n, ok := w.Transport.(backends.Native); ok {
		return n.RunNative(ctx, call)
	}
	return fmt.Errorf("this backend has no collectives of its own")
}

// ReadsSenderBuffer passes on the backend's answer (backends.DirectReader).
func (w *transport) ReadsSenderBuffer() bool {
	dr, ok := w.Transport.(backends.DirectReader)
	return ok && dr.ReadsSenderBuffer()
}

// failed is a send that failed when it was posted.
type failed struct{ err error }

func (f failed) Wait(context.Context) error { return f.err }

// recovering is a transport whose backend can run a failed call again: it
// passes backends.Recoverer on.
type recovering struct {
	*transport
	rec backends.Recoverer
}

// Watch implements backends.Recoverer.
func (w recovering) Watch(seq uint64, cancel context.CancelCauseFunc) { w.rec.Watch(seq, cancel) }

// Agree implements backends.Recoverer.
func (w recovering) Agree(ctx context.Context, seq uint64, v backends.Vote) (backends.Vote, error) {
	return w.rec.Agree(ctx, seq, v)
}

// Recover implements backends.Recoverer.
func (w recovering) Recover(ctx context.Context, seq uint64) error { return w.rec.Recover(ctx, seq) }

// hold keeps the rank from going on for d: on its virtual clock when it
// has one, else in wall time.
func (w *transport) hold(d time.Duration) {
	if w.holder != nil {
		w.holder.Hold(d)
		return
	}
	holdFor(d)
}

// holdFor waits for d precisely. A timer alone wakes up to a millisecond
// late on virtual machines whose processors are idle, which would turn
// every injected delay of microseconds into one of a millisecond: it
// sleeps all but the last millisecond, then yields the processor until the
// time is up.
func holdFor(d time.Duration) {
	deadline := time.Now().Add(d)
	if d > 2*time.Millisecond {
		time.Sleep(d - time.Millisecond)
	}
	for time.Now().Before(deadline) {
		runtime.Gosched()
	}
}
