package backends

import (
	"context"
	"time"
)

// RankTimes is one rank's state in virtual time (sim's): its clock, the
// part of it spent waiting for messages (WaitClock), when it may hand out
// its next message (a gap after its last), and when each of its egress
// ports (0: inside its server, 1: between servers) has sent what it was
// given, and each of its ingress ports' account: when the port would
// have taken every byte the rank received on it since its ports were last
// free, moved back to back (a message arrives no earlier than a latency
// after its own bytes join that account).
type RankTimes struct {
	Clock, Waited, Issue time.Duration
	Busy, In             [2]time.Duration
}

// LinkTimes is what a transport in virtual time charges, rounded as it
// rounds them, for a world whose ranks all sit on one server: a message
// of n bytes takes Move(n) on its sender's port and arrives Alpha after
// it has left, or Alpha after its receiver's ingress account (RankTimes.In)
// has moved by Move(n), whichever is later; a rank hands out one message every Gap; a reduction into n
// bytes takes Reduce(n) of its time, a copy of n bytes Copy(n).
type LinkTimes struct {
	Alpha, Gap         time.Duration
	Move, Reduce, Copy func(n int) time.Duration
}

// WorldTimer is implemented by transports in virtual time (sim) that can
// time one call for the whole world at once, for calls without payload
// whose every rank's time follows from the ranks' states in closed form.
// Every rank of the world calls TimeWorld for the same call with an
// equivalent eval. The ranks meet in memory, taking no virtual time; if
// the world is on one server, one call of eval gets the link's times and
// every rank's state, by rank, and moves each to where the call leaves
// it, reporting true; each rank then takes its own. TimeWorld reports
// false, with nil, for every rank alike when it did not time the call
// (eval declined, or the world spans servers): the ranks then run it
// message by message. Its error is the meeting's (a rank gave up or
// left).
type WorldTimer interface {
	TimeWorld(ctx context.Context, eval func(l LinkTimes, ranks []RankTimes) bool) (bool, error)
}
