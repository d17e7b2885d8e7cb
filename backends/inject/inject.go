package inject

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/limits"
)

// Wrap returns t with spec's faults applied to what this rank sends, with
// random choices drawn from seed (and the rank, so ranks differ), on every
// call (WrapGated scopes them to the calls a harness measures). It returns
// t itself for an empty spec.
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

	// gated: faults act only while open (WrapGated, Gate); else always.
	gated, open bool
	// ctx ends the holds of the open gate (nil: they run out), and limit
	// is the op's time limit (0: none).
	ctx   context.Context
	limit time.Duration
	// active says whether faults act on the current call; measured counts
	// the calls they have acted on, which op:N numbers.
	active   bool
	measured uint64
	// held is what the current call's faults have held so far; holdErr
	// is the error of a hold of it that ended early, which every later
	// post of the call fails with.
	held    time.Duration
	holdErr error
	// corrupted counts the messages corrupted so far (Gate.Corrupted).
	corrupted int64
}

// BeginCall implements backends.CallTagger: it keeps the call's number for
// faults at a given call, makes a slow rank late, and passes the call on.
func (w *transport) BeginCall(c backends.Call) {
	w.call = c
	w.active = !w.gated || w.open
	w.held, w.holdErr = 0, nil
	if w.active {
		w.measured++
		for _, f := range w.spec {
			if f.Kind == Slow && f.From == w.Rank() {
				if err := w.hold(f.Min, f, "the start of the call"); err != nil {
					w.holdErr = err
					break
				}
			}
		}
	}
	if tg, ok := w.Transport.(backends.CallTagger); ok {
		tg.BeginCall(c)
	}
}

// number is the current call's number as op:N counts it: among the calls
// faults act on when gated, else the call's own.
func (w *transport) number() uint64 {
	if w.gated {
		return w.measured
	}
	return w.call.Seq
}

// where names the current call in errors: "op #17", or for a gated
// transport "measured op #3".
func (w *transport) where() string {
	if w.gated {
		return fmt.Sprintf("measured op #%d", w.measured)
	}
	return fmt.Sprintf("op #%d", w.call.Seq)
}

// Send applies the faults that match a message from this rank to peer:
// it holds the message for delays and bandwidth limits (on its link where
// the transport can, backends.LinkHolder; else by holding the rank),
// corrupts a copy, or fails the send.
func (w *transport) Send(peer int, buf []byte) backends.Request {
	if !w.active {
		return w.Transport.Send(peer, buf)
	}
	if w.holdErr != nil {
		return failed{w.holdErr}
	}
	me := w.Rank()
	var hold time.Duration
	var cause Fault // the first fault that holds the message, for errors
	for i, f := range w.spec {
		if !f.matches(me, peer) {
			continue
		}
		switch f.Kind {
		case Delay, Bandwidth:
			d := f.Min
			if f.Kind == Bandwidth {
				// Saturates: 1 PiB at 1 B/s is past what a Duration holds.
				d = limits.DurationOf(float64(len(buf)) / f.Rate)
			} else if f.Max > f.Min {
				d = limits.AddDurations(d, time.Duration(w.rng.Int64N(int64(f.Max-f.Min+1))))
			}
			if hold == 0 {
				cause = f
			}
			hold = limits.AddDurations(hold, d)
		case Fail:
			if w.hit(i, f) {
				return w.fail(f, peer, buf)
			}
		case Corrupt:
			if len(buf) > 0 && w.hit(i, f) {
				buf = bytes.Clone(buf)
				buf[w.rng.IntN(len(buf))] ^= 1 << w.rng.IntN(8)
				w.corrupted++
			}
		}
	}
	if hold > 0 {
		what := fmt.Sprintf("the send to rank %d", peer)
		if lh, ok := w.Transport.(backends.LinkHolder); ok {
			if err := w.charge(hold, cause, what); err != nil {
				return w.abort(err)
			}
			return lh.SendHeld(peer, buf, hold)
		}
		if err := w.hold(hold, cause, what); err != nil {
			return w.abort(err)
		}
	}
	return w.Transport.Send(peer, buf)
}

// abort gives the current call up on a hold that failed with err, as a
// rank gives up an op past its time limit: this rank's later posts of the
// call fail with err, and where the backend can drop links, every link of
// this rank is dropped with err, so that what this rank and its peers
// still wait for in the call fails at once, naming the fault, rather than
// at their own time limits, blaming the wait.
func (w *transport) abort(err error) backends.Request {
	w.holdErr = err
	if d, ok := w.Transport.(backends.LinkDropper); ok {
		for peer := range w.Size() {
			if peer != w.Rank() {
				d.DropLink(peer, err)
			}
		}
	}
	return failed{err}
}

// Recv implements backends.Transport: a call whose hold ended early
// posts nothing more.
func (w *transport) Recv(peer int, buf []byte) backends.Request {
	if w.active && w.holdErr != nil {
		return failed{w.holdErr}
	}
	return w.Transport.Recv(peer, buf)
}

// RecvReduce implements backends.Transport, as Recv.
func (w *transport) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	if w.active && w.holdErr != nil {
		return failed{w.holdErr}
	}
	return w.Transport.RecvReduce(peer, dst, acc, reduce)
}

// hit reports whether fault i fires for this message.
func (w *transport) hit(i int, f Fault) bool {
	if f.Call > 0 {
		if w.number() != f.Call || w.fired[i] {
			return false
		}
		w.fired[i] = true
		return true
	}
	return w.rng.Float64() < f.Prob
}

// fail fails a send to peer: by dropping the connection where the backend
// can (tcp, shm, sim), so that the peer's side fails too and at once,
// else by failing the transfer on this side.
func (w *transport) fail(f Fault, peer int, buf []byte) backends.Request {
	err := injected{fmt.Errorf("%w: injected failure of a send from rank %d to rank %d in %s (--inject %v)",
		backends.ErrPeerGone, w.Rank(), peer, w.where(), f), -1}
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

// failed is a request that failed when it was posted.
type failed struct{ err error }

func (f failed) Wait(context.Context) error { return f.err }

// injected marks an error that a fault caused (ErrInjected), with the
// rank whose transport the fault held (-1 where none did).
type injected struct {
	error
	rank int
}

// HeldRank returns the rank whose own transport the fault of --inject
// behind err held, when err is such a fault's: the rank the fault is on,
// whose error says it first-hand (a peer's says it through a receive).
func HeldRank(err error) (int, bool) {
	var in injected
	if errors.As(err, &in) && in.rank >= 0 {
		return in.rank, true
	}
	return 0, false
}

func (e injected) Unwrap() error { return e.error }

// Is implements errors.Is: an injected error is ErrInjected.
func (e injected) Is(target error) bool { return target == ErrInjected }

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
