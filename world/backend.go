package world

import (
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/backends/tcp"
)

// WorldOptions are the settings a sweep or a scenario gives the backends
// that take them; BackendOptions picks those of the backend that runs.
type WorldOptions struct {
	// Links is the model of simulated links; nil takes the default.
	Links *sim.LinkModel
	// Master, Bind, ConnectTimeout, OpTimeout, Args and PerProcess: see
	// tcp.Options.
	Master, Bind              string
	ConnectTimeout, OpTimeout time.Duration
	Args                      []string
	PerProcess                int
}

// BackendOptions returns backends.Config.Options for the backend registered
// as name, chosen by what it is: a simulating backend takes sim.Options
// (its link model), one whose ranks meet at a rendezvous address or that
// starts rank processes takes tcp.Options; the others take none.
func BackendOptions(name string, w WorldOptions) any {
	c, _ := backends.CapsOf(name)
	switch {
	case c.Simulated:
		var o sim.Options
		if w.Links != nil {
			o.Links = *w.Links
		}
		return o
	case c.Rendezvous || c.Launches:
		return tcp.Options{Master: w.Master, Bind: w.Bind, ConnectTimeout: w.ConnectTimeout, OpTimeout: w.OpTimeout, Args: w.Args, PerProcess: w.PerProcess}
	}
	return nil
}
