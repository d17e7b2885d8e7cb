package backends

import "time"

// DefaultConnectTimeout bounds setting up a world whose ranks meet (a
// rendezvous and its connections) when the settings give no bound
// (Settings.ConnectTimeout 0): HCCL's default for HCCL_CONNECT_TIMEOUT,
// which --connect-timeout shows as its default.
const DefaultConnectTimeout = 120 * time.Second

// Settings are what a world says about where and how its ranks meet, from
// which a backend that takes options of its own makes them (OptionsMaker).
type Settings struct {
	// Master is rank 0's rendezvous address, host:port ("": the backend
	// finds it, or needs none).
	Master string
	// Bind is the address or interface the ranks listen on ("": loopback).
	Bind string
	// ConnectTimeout bounds setting up; OpTimeout one op.
	ConnectTimeout, OpTimeout time.Duration
	// Args is the command line, for the rank processes a backend starts.
	Args []string
	// PerProcess is how many ranks each rank process hosts; 0 or 1 is one.
	PerProcess int
	// Own is the backend's own options as the harness holds them, of a
	// type the backend's package defines (what its FlagDefiner made of
	// its flags); nil takes the backend's defaults, and a backend ignores
	// a type it does not define.
	Own any
	// Links are the links the harness measures the world against, which
	// a backend that simulates its links simulates.
	Links WorldLinks
}

// WorldLinks are what the harness says of a world's links, as its user
// gave them: the bandwidth of a link inside a server and between servers
// in GB/s (0: not given, the backend's own default; a zero InterGBps is
// IntraGBps), and the ranks of a server, numbered server by server (0:
// one server).
type WorldLinks struct {
	IntraGBps, InterGBps float64
	PerServer            int
}

// OptionsMaker is implemented by a backend that takes options of its own:
// Options makes, from the world's Settings, the value Config.Options
// carries to its Run, LaunchedWorld and CheckConfig. A backend without it
// takes none (Config.Options nil).
type OptionsMaker interface {
	Options(s Settings) any
}

// OptionsFor returns Config.Options for b and the world's settings s: b's
// own (OptionsMaker), or nil.
func OptionsFor(b Backend, s Settings) any {
	if m, ok := b.(OptionsMaker); ok {
		return m.Options(s)
	}
	return nil
}

// LinkMemory is implemented by a backend that says what its links take in
// memory, for the memory estimate (--dry-run, and the check against what
// the machine has): LinkBytes is what one rank's links hold in a world of
// ranks ranks, the rank exchanging with peers of them. A backend without
// it is charged as ranks in processes joined by sockets are (tcp's).
type LinkMemory interface {
	LinkBytes(ranks, peers int) int64
}

// OwnChecker is implemented by a backend's own options (Settings.Own) that
// can be wrong for a world: CheckOwn says what is wrong with them for a
// world on backend b, which need not be theirs (a plan built in Go may
// hand one backend another's options), with links l. Its error is a
// fielderr.FieldError naming the options' fields as Go spells them, which
// the command shows as the flags that set them (flagdoc.Sets), and the
// harness's fields it mentions ("Backend", "Topology").
type OwnChecker interface {
	CheckOwn(b Backend, l WorldLinks) error
}

// PayloadOption is implemented by a backend's own options that can ask
// for a run without payload (Caps.NoPayload): WithoutPayload reports
// whether they do, which the harness then runs (bench.Links.NoPayload).
type PayloadOption interface {
	WithoutPayload() bool
}
