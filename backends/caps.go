package backends

import "github.com/hccl-test/hccl-test/dtype"

// Caps says what a backend's worlds are, so that callers choose by what a
// backend does (which flags mean something on it, which checks apply, what
// a run of it costs in memory) instead of by its name. A backend answers it
// in Capabilities, which a harness asks of the backend it resolved
// (world.World.Resolve) before anything runs. The
// zero Caps is a backend of none of these kinds.
type Caps struct {
	// Simulated: the ranks run in virtual time on simulated links; rows
	// are timed by their clocks (Clock), and the backend's Options carry
	// the link model.
	Simulated bool
	// NoPayload: a run may carry lengths only: its transports honour
	// Call.NoPayload, and its times do not depend on the bytes moved.
	NoPayload bool
	// Native: its transports run whole collectives with the library's own
	// (Native), which coll's "native" algorithm hands calls to.
	Native bool
	// NativeDTypes and NativeRedOps list the data types and reductions
	// the Native collectives serve, so that a plan asking for another is
	// refused before any rank starts; nil serves every one.
	NativeDTypes []dtype.DType
	NativeRedOps []dtype.ReduceOp
	// InProcess: every rank is a goroutine of this process, and messages
	// move through its memory.
	InProcess bool
	// SharedMemory: receivers read the sender's buffer itself
	// (DirectReader), so a receive-and-reduce is one pass over memory.
	SharedMemory bool
	// Launches: the backend may start rank processes of its own (a world
	// of several ranks in one command), with Options telling it how.
	Launches bool
	// Rendezvous: its ranks meet at an address, listen on a network
	// address and set up connections, as its Options say.
	Rendezvous bool
	// Hosts: its transports report the host of every rank
	// (HostReporter), from which servers can be derived.
	Hosts bool
	// Recovers: its transports implement Recoverer, so a failed call can
	// be run again.
	Recovers bool
	// LaunchDefault: the processes a launcher (mpirun, srun, torchrun)
	// started run this backend when none is named, so that they are one
	// world (proc); one registered backend says so.
	LaunchDefault bool
	// MaxRanks is the largest world the backend runs; 0 means
	// DefaultMaxRanks. A simulator, whose ranks cost memory and time
	// linear in their number, goes further than backends whose ranks are
	// processes or share this machine's cores.
	MaxRanks int
}

// DefaultMaxRanks is the largest world of a backend whose Caps.MaxRanks
// is 0.
const DefaultMaxRanks = 4096

// RankLimit returns the largest world the backend runs: MaxRanks, or
// DefaultMaxRanks when that is 0.
func (c Caps) RankLimit() int {
	if c.MaxRanks > 0 {
		return c.MaxRanks
	}
	return DefaultMaxRanks
}

// With returns the registered backends whose capabilities satisfy has,
// sorted by name.
func With(has func(Caps) bool) []Backend {
	registryMu.Lock()
	defer registryMu.Unlock()
	var bs []Backend
	for _, n := range namesLocked() {
		if has(registry[n].Capabilities()) {
			bs = append(bs, registry[n])
		}
	}
	return bs
}

// NamesWith returns the names of the registered backends whose
// capabilities satisfy has, sorted.
func NamesWith(has func(Caps) bool) []string {
	var names []string
	for _, b := range With(has) {
		names = append(names, b.Name())
	}
	return names
}
