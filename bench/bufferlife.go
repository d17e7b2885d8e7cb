package bench

import (
	"runtime"
	"sync"

	"github.com/hccl-test/hccl-test/payload"
)

// untilEnd holds what a run's ranks allocated outside the Go heap that a
// transport may still write into after the rank that owns it returned: a
// receive whose wait gave up on its context stays posted until the
// transport ends (tcp's reader goes on filling it, see its request.Wait),
// so its buffer is freed only once the backend's Run has returned. Freed
// earlier, the reader's next chunk faults (SIGTERM in tcp's link probe:
// "unexpected fault address", a Go stack trace of 429 lines).
type untilEnd struct {
	mu    sync.Mutex // guards pools and ranks
	pools []*payload.BufferPool
	// ranks keeps each rank's harness, and so its communicators, whose
	// scratch space is unmapped when the communicator is collected
	// (coll.Comm's scratchMem), reachable until the transport has ended.
	ranks []*rankRunner
}

// add hands bp to the run, to be freed once its transport has ended.
func (u *untilEnd) add(bp *payload.BufferPool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.pools = append(u.pools, bp)
}

// keep keeps r reachable until free.
func (u *untilEnd) keep(r *rankRunner) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ranks = append(u.ranks, r)
}

// free frees every pool handed over; call it once the backend's Run has
// returned, when no transport of the run is left to write into them.
func (u *untilEnd) free() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, bp := range u.pools {
		bp.Free()
	}
	u.pools = nil
	runtime.KeepAlive(u.ranks)
	u.ranks = nil
}

// release frees bp, a pool of r's own that a call used: at once when the
// call succeeded (every request on it finished), else once the run's
// transport has ended, since a request that failed on its context may
// still be filled (untilEnd). A rankRunner outside a run frees it at once.
func (r *rankRunner) release(bp *payload.BufferPool, err error) {
	if err == nil || r.untilEnd == nil {
		bp.Free()
		return
	}
	r.untilEnd.add(bp)
}
