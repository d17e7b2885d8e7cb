package backends

import "context"

// Outcome is how one rank's part of a collective call ended, as the rank
// reports it when the ranks agree on the call (Recoverer.Agree). Outcomes
// are ordered: the verdict on a call is the worst outcome any rank reports.
// Its String (outcome_string.go) names it.
type Outcome uint8

//go:generate go tool stringer -type Outcome -linecomment

const (
	// Succeeded: the rank's part finished without error.
	Succeeded Outcome = iota // succeeded
	// Transient: it failed in a way that running the call again may cure:
	// a dropped link, or a peer that gave up on the call.
	Transient // transient failure
	// Fatal: it failed in a way that running it again cannot cure: ranks
	// disagree about the call, a deadline passed, the run was stopped.
	Fatal // fatal failure
)

// Vote is one rank's report on a call; a verdict is a Vote too: the worst
// outcome, the lowest rank that reported it, and its error text.
type Vote struct {
	Rank    int
	Outcome Outcome
	Err     string // what failed, "" on success
}

// Worse reports whether v should replace w as the verdict: a worse
// outcome, or the same one from a lower rank.
func (v Vote) Worse(w Vote) bool {
	return v.Outcome > w.Outcome || v.Outcome == w.Outcome && v.Rank < w.Rank
}

// Recoverer is implemented by transports on which a failed collective call
// can be run again (operator re-execution, --retry). Every rank of the world
// calls its methods for the same calls in the same order, from the rank's
// own goroutine; the agreement they carry travels outside the links whose
// failure they recover from.
type Recoverer interface {
	// Watch arranges for cancel to be called, with an error that wraps
	// ErrPeerGone and names the reporting rank, as soon as any rank votes
	// that call seq failed; at once if that is already known. A rank calls
	// it before it starts the call, so that a failure elsewhere stops it
	// from waiting on a peer that has given up.
	Watch(seq uint64, cancel context.CancelCauseFunc)
	// Agree casts this rank's vote on call seq and returns the verdict
	// once every rank has voted: every rank receives the same one. A
	// failure vote reaches the other ranks at once (see Watch). Agree
	// fails, naming what it waited for, when ctx ends first or a rank is
	// gone.
	Agree(ctx context.Context, seq uint64, v Vote) (Vote, error)
	// Recover is called by every rank after a verdict that call seq
	// failed, before running it again: it fails what is still pending,
	// drops every message still in flight, makes the links usable again,
	// and returns once every rank has done the same.
	Recover(ctx context.Context, seq uint64) error
}
