package runctl

import (
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// Epoch is the origin of a rank's time on backends without a virtual
// clock: the process's start, for both harnesses.
var Epoch = time.Now()

// VirtualClock is a rank's clock on a backend in virtual time (sim), with
// what holds it: time the rank spends apart from its messages goes on it.
type VirtualClock struct {
	backends.Clock
	backends.Holder
}

// VirtualClockOf returns t's virtual clock and what holds it, found
// through any wrappers; false on a backend in wall time.
func VirtualClockOf(t backends.Transport) (VirtualClock, bool) {
	c, vc := backends.ClockOf(t)
	h, vh := backends.HolderOf(t)
	return VirtualClock{c, h}, vc && vh
}

// HoldUntil holds the clock until t, if it reads earlier.
func (v VirtualClock) HoldUntil(t time.Duration) {
	if now := v.Now(); now < t {
		v.Hold(t - now)
	}
}
