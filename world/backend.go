package world

import (
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// Resolve returns the backend w.Backend names. It is the one place above
// package backends where a backend's name is looked up: every caller asks
// the value it returns (its Capabilities, its optional interfaces), never
// the name. Its error names the registered backends.
func (w World) Resolve() (backends.Backend, error) {
	return backends.Lookup(w.Backend)
}

// Caps returns what w's backend is (Resolve); the zero Caps for a name
// that is not registered, which ValidateWho refuses naming the registered
// ones.
func (w World) Caps() backends.Caps {
	b, err := w.Resolve()
	if err != nil {
		return backends.Caps{}
	}
	return b.Capabilities()
}

// WorldOptions are the settings a sweep or a scenario gives the backends
// that take them; BackendOptions has the backend that runs make its own.
type WorldOptions struct {
	// Own is the backend's own options, of a type its package defines
	// (what its flags gave, World.Own); nil takes its defaults. See
	// backends.Settings.
	Own any
	// Links are the harness's links (backends.Settings.Links).
	Links backends.WorldLinks
	// Master, Bind, ConnectTimeout, OpTimeout, Args and PerProcess: see
	// backends.Settings.
	Master, Bind              string
	ConnectTimeout, OpTimeout time.Duration
	Args                      []string
	PerProcess                int
}

// BackendOptions returns backends.Config.Options for b: the options it
// makes of w (backends.OptionsMaker), nil for a backend that takes none or
// for a nil b (a name that is not registered).
func BackendOptions(b backends.Backend, w WorldOptions) any {
	if b == nil {
		return nil
	}
	return backends.OptionsFor(b, w.settings())
}

// settings are the backends.Settings of w.
func (w WorldOptions) settings() backends.Settings {
	return backends.Settings{Own: w.Own, Links: w.Links, Master: w.Master, Bind: w.Bind,
		ConnectTimeout: w.ConnectTimeout, OpTimeout: w.OpTimeout, Args: w.Args, PerProcess: w.PerProcess}
}

// Settings returns what w says to its backend of where and how its ranks
// meet, with the harness's links l: the settings its OptionsMaker and
// Modeled read.
func (w World) Settings(l backends.WorldLinks) backends.Settings {
	return WorldOptions{Own: w.Own, Links: l, Master: w.Master, Bind: w.Bind, ConnectTimeout: w.ConnectTimeout,
		OpTimeout: w.Timeout, Args: w.Args, PerProcess: w.PerProcess}.settings()
}
