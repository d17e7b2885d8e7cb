package sim

import (
	"math"
	"time"

	"github.com/hccl-test/hccl-test/internal/limits"
)

// timing is what the link model says about one message.
type timing struct {
	// left is when its last byte has left the sender's port; arrive is
	// when its last byte reaches the receiver, where its ingress port is
	// free (ingress).
	left, arrive time.Duration
	// port is the level it travels on (0: inside a server, 1: between
	// servers), x what its bytes take on the receiver's ingress port of
	// that level, and alpha the level's latency.
	port     int
	x, alpha time.Duration
	// pull, set where receivers move the data (LinkModel.Pull), replaces
	// both (pull.go).
	pull *pulled
}

// book puts a message of n bytes from e to peer on the egress port it
// takes, at e's current time or a gap after the message e sent before,
// whichever is later, behind whatever the port is still sending, and
// returns its timing. A hold keeps the message on the port that much
// longer, as on a slower link. Only e's goroutine books on e's ports, in its
// program order.
func (e *endpoint) book(peer, n int, hold time.Duration) timing {
	return e.f.book(e.rank, peer, n, hold, e.Now(), &e.busy, &e.issue)
}

// book is endpoint.book for a rank whose clock reads now and whose ports
// and gap are busy and issue, which it moves: the one formula of the
// package comment, shared by the ranks' endpoints and the symmetric
// evaluation's mirror (symmetric.go), so that both time a message alike.
func (f *fabric) book(rank, peer, n int, hold, now time.Duration, busy *[2]time.Duration, issue *time.Duration) timing {
	l := f.links
	port, alpha, gbps := 0, l.IntraAlpha, l.IntraGBps
	if f.server(peer) != f.server(rank) {
		port, alpha, gbps = 1, l.InterAlpha, l.InterGBps
	}
	issued := max(now, *issue)
	*issue = limits.AddDurations(issued, l.Gap)
	start := max(issued, busy[port])
	left := limits.AddDurations(start, hold, bytesAt(n, gbps))
	busy[port] = left
	x := bytesAt(n, gbps)
	return timing{left: left, arrive: limits.AddDurations(left, alpha), port: port, x: x, alpha: alpha}
}

// ingress takes a message whose timing is t on the receiver's ingress
// port of its level, whose account is in, and returns when it has
// arrived. The account is when the port would have taken every byte it
// was given since the receiver's ports were last free (Align), moving
// them back to back: the message arrives no earlier than its sender's
// port let it (t.arrive) and no earlier than a latency after its own
// bytes join that account. It is the one formula of the receiving side,
// shared by the endpoints, the symmetric evaluation's mirror and (in
// closed form) coll's twoshot, so that all time a message alike.
func ingress(t timing, in *[2]time.Duration) time.Duration {
	in[t.port] = limits.AddDurations(in[t.port], t.x)
	return max(t.arrive, limits.AddDurations(in[t.port], t.alpha))
}

// reduceTime is what reducing n received bytes costs the receiver.
func (f *fabric) reduceTime(n int) time.Duration { return bytesAt(n, f.links.ReduceGBps) }

// Copied implements backends.LocalWorker: a copy of n bytes between the
// rank's own buffers takes n/CopyGBps of its time.
func (e *endpoint) Copied(n int) { e.advanceBy(bytesAt(n, e.f.links.CopyGBps)) }

// Reduced implements backends.LocalWorker: a reduction of the rank's own
// buffers into n bytes takes n/ReduceGBps of its time, as the reduction
// of n received bytes does.
func (e *endpoint) Reduced(n int) { e.advanceBy(e.f.reduceTime(n)) }

// Hold implements backends.Holder: the rank spends d of its time on
// something else (a compute phase, an injected hold) before its next
// message or piece of work.
func (e *endpoint) Hold(d time.Duration) {
	if d > 0 {
		e.advanceBy(d)
	}
}

// bytesAt returns the time n bytes take at gbps GB/s (bytes per
// nanosecond), rounded to the nanosecond, at most math.MaxInt64.
func bytesAt(n int, gbps float64) time.Duration {
	return limits.DurationOf(math.Round(float64(n)/gbps) / 1e9)
}
