package backends

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Config is what every backend needs to start a world. What only some
// backends need (the tcp backend's rendezvous address, the sim backend's
// link model) is in Options, of a type the backend defines.
type Config struct {
	// Ranks is the number of ranks in the world (>= 1).
	Ranks int
	// Log receives one line per notable event that is not an error of the
	// run (a dropped stranger, a child that exited), and the output of rank
	// processes the backend starts itself. nil discards them. The command
	// passes its stderr.
	Log io.Writer
	// Retry says that the run may run failed calls again: a backend whose
	// transports implement Recoverer sets up what that needs (the tcp
	// backend keeps a control connection from every rank to rank 0).
	Retry bool
	// Options are the backend's own settings, of the type its package
	// defines (tcp.Options, sim.Options), or nil for its defaults. A
	// backend refuses options of another type (OptionsError) in Run and,
	// if it is a ConfigChecker, before anything starts.
	Options any
}

// Validate reports what is wrong with c, if anything; the backend checks
// its Options.
func (c Config) Validate() error {
	if c.Ranks < 1 {
		return fmt.Errorf("ranks must be at least 1, got %d", c.Ranks)
	}
	return nil
}

// OptionsError is the error of a backend named backend given options of a
// type other than its own (want, as "tcp.Options").
func OptionsError(backend string, got any, want string) error {
	return fmt.Errorf("backend %s: options of type %T, want %s", backend, got, want)
}

// ConfigChecker is implemented by backends that can check the options
// of a Config that concern them (addresses, interfaces) before any rank
// starts, so that a mistake in them is refused as bad input. CheckConfig
// must not start anything that outlives it; its error names the flag and
// the value.
type ConfigChecker interface {
	CheckConfig(cfg Config) error
}

// CheckConfig has b check cfg, if it is a ConfigChecker.
func CheckConfig(b Backend, cfg Config) error {
	if c, ok := b.(ConfigChecker); ok {
		return c.CheckConfig(cfg)
	}
	return nil
}

// Launch describes a world started by an external launcher (mpirun, srun,
// torchrun) as this process sees it.
type Launch struct {
	Rank, Size int
	// Source names the launcher and variables that gave these values.
	Source string
	// Local is how many of the world's processes run on this host, as
	// the launcher says, 0 where it does not; LocalSource names the
	// variables that say it.
	Local       int
	LocalSource string
}

// Launched is implemented by backends whose ranks may be started by an
// external launcher. LaunchedWorld reports whether this process is such a
// rank, and the world it belongs to; it returns an error when the
// launcher's variables, with cfg, do not describe a world it can join (so
// that the mistake is reported before anything starts).
type Launched interface {
	LaunchedWorld(cfg Config) (Launch, bool, error)
}

// RankFunc is the work of one rank. It is called once per rank that this
// process hosts, each call in its own goroutine, with that rank's Transport.
// The context is cancelled as soon as any rank's RankFunc fails.
type RankFunc func(ctx context.Context, t Transport) error

// Backend starts worlds of ranks.
type Backend interface {
	// Name is the name users select the backend by (--backend).
	Name() string
	// Capabilities says what the backend's worlds are; the answer is the
	// same on every call and needs no world.
	Capabilities() Caps
	// Run starts the ranks of a world described by cfg that this process
	// hosts, calls body for each, and returns when all have returned. It
	// returns the first failure of any rank (a rank's failure cancels the
	// others' context), and releases every resource it took.
	Run(ctx context.Context, cfg Config, body RankFunc) error
}

var (
	registryMu sync.Mutex // guards registry
	registry   = map[string]Backend{}
)

// Register makes a backend selectable by its name. It panics on a
// duplicate name: registration happens in init functions, where a duplicate
// is a programming error.
func Register(b Backend) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[b.Name()]; dup {
		panic("backends: duplicate backend " + b.Name())
	}
	registry[b.Name()] = b
}

// Lookup returns the backend registered under name. A harness resolves
// its backend once, in world.World.Resolve, and asks the value it returns.
func Lookup(name string) (Backend, error) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if b, ok := registry[name]; ok {
		return b, nil
	}
	if how, ok := unbuilt[name]; ok { // unbuilt.go
		return nil, fmt.Errorf("backend %q is not in this build: it %s", name, how)
	}
	return nil, fmt.Errorf("unknown backend %q (registered: %s)", name, strings.Join(namesLocked(), ", "))
}

// Names returns the registered backend names, sorted.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	return namesLocked()
}

func namesLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return slices.Clip(names)
}

// Same reports whether a and b are the same registered backend (the
// registry holds one backend per name), whatever their types allow ==.
func Same(a, b Backend) bool { return a != nil && b != nil && a.Name() == b.Name() }
