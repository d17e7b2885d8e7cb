package bench

import (
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/backends/tcp"
)

// capsOf returns what the backend registered as name is; the zero Caps for
// a name that is not registered, which Plan.Validate refuses naming the
// registered ones.
func capsOf(name string) backends.Caps {
	c, _ := backends.CapsOf(name)
	return c
}

// worldOptions are the settings a sweep or a scenario gives the backends
// that take them; backendOptions picks those of the backend that runs.
type worldOptions struct {
	// links is the model of simulated links; nil takes the default.
	links *sim.LinkModel
	// master, bind, connectTimeout and args: see tcp.Options.
	master, bind   string
	connectTimeout time.Duration
	args           []string
}

// backendOptions returns backends.Config.Options for the backend registered
// as name, chosen by what it is: a simulating backend takes sim.Options
// (its link model), one whose ranks meet at a rendezvous address or that
// starts rank processes takes tcp.Options; the others take none.
func backendOptions(name string, w worldOptions) any {
	c := capsOf(name)
	switch {
	case c.Simulated:
		var o sim.Options
		if w.links != nil {
			o.Links = *w.links
		}
		return o
	case c.Rendezvous || c.Launches:
		return tcp.Options{Master: w.master, Bind: w.bind, ConnectTimeout: w.connectTimeout, Args: w.args}
	}
	return nil
}
