package backends

import "time"

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
	// type the backend's package defines (sim: a *sim.LinkModel); nil
	// takes the backend's defaults, and a backend ignores a type it does
	// not define.
	Own any
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
