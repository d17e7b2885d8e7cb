package tcp

import (
	"fmt"
	"time"
)

// childPoll is how often a parent looks at its rank processes' state: a
// read of /proc per child, ten times a second, costs nothing a run
// measures, and ends a run at most this long after a child's stop has
// lasted the op's limit.
const childPoll = 100 * time.Millisecond

// stoppedError is why a run ended whose rank process stayed stopped for
// the op's limit. The run's one line names the child itself (report), so
// the error says only how long.
type stoppedError struct {
	rank  int
	limit time.Duration
}

func (e *stoppedError) Error() string {
	return fmt.Sprintf("rank %d was stopped for %v, the op's limit (-T)", e.rank, e.limit)
}

// exitedError is why a run ended whose rank process exited with an error
// before the run was over: its peers would wait for it until their own
// limits (a rank killed before it joined the rendezvous held rank 0 for
// the whole connect timeout, 2 minutes). The run's one line names the
// child itself (report), so the error says only that it ended.
type exitedError struct{ rank int }

func (e *exitedError) Error() string {
	return fmt.Sprintf("rank %d's process ended before the run did", e.rank)
}

// watch looks at the children every childPoll until the returned function
// is called, and calls fail, once: with an *exitedError as soon as one of
// them has exited with an error, and with a *stoppedError when one has
// been stopped (state T or t in /proc) at every look for limit. It does
// so whatever rank 0 is doing: an op's own limit starts only when rank 0
// waits on the stopped rank, and setting up a large row on a loaded host
// took seconds before that. A limit of 0 watches for no stop.
func (cs *children) watch(limit time.Duration, fail func(error)) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(childPoll)
		defer tick.Stop()
		since := make([]time.Time, len(cs.procs)) // zero while running
		for {
			select {
			case <-quit:
				return
			case now := <-tick.C:
				for i, c := range cs.procs {
					select {
					case <-c.done:
						if c.err != nil {
							fail(&exitedError{rank: c.rank})
							return
						}
						since[i] = time.Time{}
						continue
					default:
					}
					if limit <= 0 || c.stopped() == "" {
						since[i] = time.Time{}
						continue
					}
					if since[i].IsZero() {
						// Stopped at most a period ago: the run ends
						// between limit and limit plus a period after
						// the stop.
						since[i] = now
					}
					if now.Sub(since[i]) >= limit {
						fail(&stoppedError{rank: c.rank, limit: limit})
						return
					}
				}
			}
		}
	}()
	return func() { close(quit); <-done }
}
