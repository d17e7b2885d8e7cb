package backends

import (
	"errors"
	"fmt"
	"time"
)

// Virtual time: a backend that simulates its links (sim) keeps a clock per
// rank that its transports report, and the harness times rows by it
// instead of by the wall clock.

// Clock is implemented by transports that run in virtual time: Now is the
// rank's virtual clock, from 0 when the world starts. It moves only as
// the rank's requests complete; computing between them takes no virtual
// time.
type Clock interface {
	Now() time.Duration
}

// ClockLimit is the furthest a virtual clock may go: 100 years of
// simulated time, a third of what a time.Duration holds, so that every
// time derived from the clocks (differences, sums of a row's iterations)
// is a Duration too. A backend in virtual time does its arithmetic on the
// clocks without wrapping and stops a clock at ClockLimit.
const ClockLimit = 100 * 365 * 24 * time.Hour

// ErrClockLimit is what CheckClock's error wraps: the simulated world was
// too slow for what was asked of it (a tiny bandwidth, a huge latency or
// hold) to be counted.
var ErrClockLimit = errors.New("the virtual clock reached its limit of 100 years")

// CheckClock returns an error wrapping ErrClockLimit once t's virtual clock
// (found as ClockOf finds it) has reached ClockLimit, nil otherwise or on a
// backend in wall time. Call it between calls, when none of the rank's
// requests is pending, so that the rank can stop without leaving its peers
// waiting on a message of its.
func CheckClock(t Transport) error {
	c, ok := ClockOf(t)
	if !ok || c.Now() < ClockLimit {
		return nil
	}
	return fmt.Errorf("%w: the simulated links, latencies or holds are too slow for this sweep (use a faster --link-bw, --sim-alpha or --inject, or a smaller -e or -n)", ErrClockLimit)
}

// WaitClock is a Clock that also counts the virtual time its rank spent
// waiting for messages to arrive (as coll.Comm.Waited counts wall time),
// so that the rest of its time is its own work: the straggler figures of
// a row.
type WaitClock interface {
	Clock
	// Waited returns the virtual time spent so far waiting for data from
	// peers, a part of Now.
	Waited() time.Duration
}

// LocalWorker is implemented by transports that run in virtual time (sim)
// and charge a rank's own work on its buffers to its clock, by length, as
// they charge its messages: copies between its buffers and reductions of
// them. coll reports every such piece of work of its algorithms, whether
// or not calls carry payload.
type LocalWorker interface {
	// Copied charges a copy of n bytes between the rank's own buffers.
	Copied(n int)
	// Reduced charges a reduction of the rank's own buffers into n bytes
	// (two operands of n bytes read, one written), or a pass of
	// arithmetic over n bytes such as Avg's division.
	Reduced(n int)
}

// Holder is implemented by transports that run in virtual time (sim): the
// time a rank spends apart from its messages and its algorithms' own work
// (a compute phase of a scenario or of --overlap, an injected slow rank's
// hold) is charged to its clock by Hold, where on other backends it passes
// in wall time.
type Holder interface {
	// Hold moves the rank's clock d forward: what the rank posts after
	// it starts no earlier. Call it from the goroutine that posts the
	// rank's requests, not while another goroutine of the rank waits on
	// some.
	Hold(d time.Duration)
}

// LinkHolder is implemented by transports that run in virtual time (sim)
// and can hold a message on its link rather than its sender: SendHeld
// sends as Send does, but the message keeps the sender's port hold longer
// than its bytes take, as a link that much slower would, while the rank
// goes on with its other work. --inject's delay and bw use it there.
type LinkHolder interface {
	SendHeld(peer int, buf []byte, hold time.Duration) Request
}

// Aligner is implemented by transports that run in virtual time (sim):
// Align sets the rank's clock to t, earlier or later than it reads, with
// nothing queued on the rank's links, as if the rank had been idle until
// t. A harness that has every rank of a world align to the same t (the
// latest any of them read before the harness's own calls: those take no
// virtual time) starts what follows from one instant on idle links, so
// that it costs the same wherever it stands. Call it when none of the
// rank's requests is pending, from the goroutine that posts them.
type Aligner interface {
	Align(t time.Duration)
}

// AlignerOf returns what aligns t's rank's clock: t if it implements
// Aligner, else the transport it wraps, and so on; false on a backend in
// wall time.
func AlignerOf(t Transport) (Aligner, bool) { return find[Aligner](t) }

// HolderOf returns what charges t's rank for time spent apart from its
// messages: t if it implements Holder, else the transport it wraps, and so
// on; false when there is none (such time passes in wall time).
func HolderOf(t Transport) (Holder, bool) { return find[Holder](t) }

// Unwrapper is implemented by transports that wrap another one (fault
// injection, a group's renumbering), so that what the wrapped transport
// implements can be found.
type Unwrapper interface {
	Unwrap() Transport
}

// ClockOf returns t's virtual clock: t's own if it implements Clock, else
// that of the transport it wraps, and so on; false when there is none.
func ClockOf(t Transport) (Clock, bool) { return find[Clock](t) }

// LocalWorkerOf returns what charges t's rank for its own work: t if it
// implements LocalWorker, else the transport it wraps, and so on; false
// when there is none (work then takes wall time only).
func LocalWorkerOf(t Transport) (LocalWorker, bool) { return find[LocalWorker](t) }

// find returns t, or the first transport that t wraps (Unwrapper) and so
// on, that implements T.
func find[T any](t Transport) (T, bool) {
	for t != nil {
		if c, ok := t.(T); ok {
			return c, true
		}
		u, ok := t.(Unwrapper)
		if !ok {
			break
		}
		t = u.Unwrap()
	}
	var zero T
	return zero, false
}
