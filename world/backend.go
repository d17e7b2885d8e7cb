package world

import (
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// WorldOptions are the settings a sweep or a scenario gives the backends
// that take them; BackendOptions has the backend that runs make its own.
type WorldOptions struct {
	// Own is the backend's own options, of a type its package defines
	// (sim: its *sim.LinkModel); nil takes its defaults. See
	// backends.Settings.
	Own any
	// Master, Bind, ConnectTimeout, OpTimeout, Args and PerProcess: see
	// backends.Settings.
	Master, Bind              string
	ConnectTimeout, OpTimeout time.Duration
	Args                      []string
	PerProcess                int
}

// BackendOptions returns backends.Config.Options for the backend registered
// as name: the options it makes of w (backends.OptionsMaker), nil for a
// backend that takes none or an unknown name.
func BackendOptions(name string, w WorldOptions) any {
	b, err := backends.Lookup(name)
	if err != nil {
		return nil
	}
	return backends.OptionsFor(b, backends.Settings{Own: w.Own, Master: w.Master, Bind: w.Bind,
		ConnectTimeout: w.ConnectTimeout, OpTimeout: w.OpTimeout, Args: w.Args, PerProcess: w.PerProcess})
}
