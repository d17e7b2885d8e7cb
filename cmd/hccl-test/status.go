package bench

import (
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/hccl-test/hccl-test/coll"
)

// running holds the Comms of the ranks this process hosts while a sweep
// runs, so that WriteStatus can say what each is doing.
var running struct {
	mu    sync.Mutex
	comms map[*coll.Comm]struct{}
}

func trackComm(c *coll.Comm) (untrack func()) {
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

// WriteStatus writes one line per rank this process hosts saying what it
// is doing now (which op, and for how long it has waited on which peers),
// without disturbing the run: the report on SIGQUIT.
func WriteStatus(w io.Writer) {
	running.mu.Lock()
	comms := make([]*coll.Comm, 0, len(running.comms))
	for c := range running.comms {
		comms = append(comms, c)
	}
	running.mu.Unlock()
	sort.Slice(comms, func(i, j int) bool { return comms[i].Rank() < comms[j].Rank() })
	if len(comms) == 0 {
		fmt.Fprintln(w, "hccl-test: no rank is running")
	}
	for _, c := range comms {
		fmt.Fprintf(w, "hccl-test: %s\n", c.Status())
	}
}
