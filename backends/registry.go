package backends

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Config is what every backend needs to start a world. Backends ignore the
// fields that do not concern them.
type Config struct {
	// Ranks is the number of ranks in the world (>= 1).
	Ranks int
	// Master is rank 0's rendezvous address, host:port, for backends whose
	// ranks are processes; "" lets the backend choose (ranks it starts
	// itself) or take its launcher's.
	Master string
	// Bind is the address or network interface that ranks listen on;
	// "" means loopback.
	Bind string
	// ConnectTimeout limits setting the world up: the rendezvous, and
	// connecting each link.
	ConnectTimeout time.Duration
	// Log receives one line per notable event that is not an error of the
	// run (a dropped stranger, a child that exited), and the output of rank
	// processes the backend starts itself. nil discards them. The command
	// passes its stderr.
	Log io.Writer
	// Args are the command-line arguments a backend that starts rank
	// processes passes to them (the same program, the same flags).
	Args []string
	// Retry says that the run may run failed calls again: a backend whose
	// transports implement Recoverer sets up what that needs (the tcp
	// backend keeps a control connection from every rank to rank 0).
	Retry bool
	// Links describes the simulated links of a backend that runs in
	// virtual time (sim); nil takes DefaultLinkModel. Other backends
	// ignore it.
	Links *LinkModel
}

// LinkModel describes simulated links: ranks numbered server by server,
// PerServer to a server (0, or at least the world's size: one server), and
// per direction of every link a latency (alpha) and a bandwidth, inside a
// server (Intra) and between servers (Inter), plus the rates at which a
// rank reduces (what it receives, or its own buffers) and copies between
// its own buffers, and the gap between two messages a rank sends. Zero
// fields take DefaultLinkModel's values (WithDefaults), except InterGBps,
// which then equals IntraGBps, CopyGBps, 1.5 times ReduceGBps, and Gap,
// half of IntraAlpha.
type LinkModel struct {
	PerServer              int
	IntraAlpha, InterAlpha time.Duration
	// Gap is the least time between the starts of two messages a rank
	// sends (LogP's g): a rank that posts several at once hands one to
	// its ports every Gap, as real ones spend time on each.
	Gap time.Duration
	// IntraGBps, InterGBps, ReduceGBps and CopyGBps are in GB/s (1e9 bytes
	// per second).
	IntraGBps, InterGBps, ReduceGBps, CopyGBps float64
	// Pull makes receivers move the data, as on shared memory: a message
	// costs its receiver its bytes at the link's rate (reduced on the way
	// at the slower of that and the reduction's rate), one message after
	// another, and its sender's send ends when the receiver has taken it.
	// Otherwise the sender's port moves it while both ranks go on.
	Pull bool
}

// Validate reports what is wrong with c, if anything.
func (c Config) Validate() error {
	if c.Ranks < 1 {
		return fmt.Errorf("ranks must be at least 1, got %d", c.Ranks)
	}
	if c.ConnectTimeout < 0 {
		return fmt.Errorf("connect timeout must not be negative, got %v", c.ConnectTimeout)
	}
	return nil
}

// ConfigChecker is implemented by backends that can check the options
// of a Config that concern them (addresses, interfaces) before any rank
// starts, so that a mistake in them is refused as bad input. CheckConfig
// must not start anything that outlives it; its error names the flag and
// the value.
type ConfigChecker interface {
	CheckConfig(cfg Config) error
}

// CheckConfig has the backend registered as name check cfg, if it is a
// ConfigChecker.
func CheckConfig(name string, cfg Config) error {
	b, err := Lookup(name)
	if err != nil {
		return err
	}
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

// Lookup returns the backend registered under name.
func Lookup(name string) (Backend, error) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if b, ok := registry[name]; ok {
		return b, nil
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
