package runctl

import (
	"sort"
	"sync"

	"github.com/hccl-test/hccl-test/coll"
)

// running holds the Comms of the ranks this process hosts while a sweep
// or a scenario runs, so that Running can say what each is doing.
var running struct {
	mu    sync.Mutex
	comms map[*coll.Comm]struct{}
}

// Track registers c, one rank's Comm, as running until untrack is
// called, for the status report (Running).
func Track(c *coll.Comm) (untrack func()) {
	running.mu.Lock()
	defer running.mu.Unlock()
	if running.comms == nil {
		running.comms = map[*coll.Comm]struct{}{}
	}
	running.comms[c] = struct{}{}
	return func() {
		running.mu.Lock()
		delete(running.comms, c)
		running.mu.Unlock()
	}
}

// Running returns the Comms of the ranks this process hosts that are running
// now, in rank order, for a status report (the command's SIGQUIT writer): a
// snapshot, safe to call while the run goes on.
func Running() []*coll.Comm {
	running.mu.Lock()
	comms := make([]*coll.Comm, 0, len(running.comms))
	for c := range running.comms {
		comms = append(comms, c)
	}
	running.mu.Unlock()
	sort.Slice(comms, func(i, j int) bool { return comms[i].Rank() < comms[j].Rank() })
	return comms
}
