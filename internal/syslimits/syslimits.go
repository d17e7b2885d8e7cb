// Package syslimits reads the limits the system puts on this process, for
// the checks a run makes before it starts and the guard that watches it:
// the memory the kernel says is available, the memory cgroups the process
// runs in (v1 and v2, its own and every ancestor's), and its rlimits on
// address space (RLIMIT_AS), on the tasks of its user (RLIMIT_NPROC: every
// thread of every process counts) and on open files (RLIMIT_NOFILE).
//
// Each limit comes back as a Bound: how much is left now, and a phrase
// naming the limit for an error line.
package syslimits

import (
	"math"

	"github.com/hccl-test/hccl-test/internal/limits"
)

// Bound is what one limit leaves the process now.
type Bound struct {
	// Room is how much more the process may take: bytes, tasks or
	// descriptors. It is meaningful only when Set.
	Room int64
	// Set reports whether the limit applies at all.
	Set bool
	// Name names the limit and its setting, to follow the room in a
	// sentence: "available" (MemAvailable), "left under the memory cgroup
	// /a/b (memory.max 2.0GiB)", "left under ulimit -v (RLIMIT_AS 7.6GiB)".
	Name string
}

// Tighter returns the bound of b and o that leaves less room.
func (b Bound) Tighter(o Bound) Bound {
	switch {
	case !o.Set:
		return b
	case !b.Set || o.Room < b.Room:
		return o
	}
	return b
}

// Limits is every limit that applies to a run of this process.
type Limits struct {
	// Memory is the tightest of the memory available (MemAvailable) and
	// the room left in each memory cgroup the process is in.
	Memory Bound
	// Cgroup is the tightest of the memory cgroups alone, whose limit the
	// kernel enforces by killing.
	Cgroup Bound
	// AddressSpace is RLIMIT_AS less the address space the process
	// holds now.
	AddressSpace Bound
	// Tasks is RLIMIT_NPROC less the tasks (threads) the user runs now;
	// not Set when the process is exempt (root, CAP_SYS_RESOURCE or
	// CAP_SYS_ADMIN) or the limit is infinite.
	Tasks Bound
	// Files is RLIMIT_NOFILE less the descriptors open now; the same
	// limit holds in every process the run starts.
	Files Bound
	// FileLimit is RLIMIT_NOFILE itself (0 when infinite), for the
	// processes the run starts, which begin with few descriptors open.
	FileLimit int64
}

// Read reads the limits of this process from the live system; a limit it
// cannot read is left unset.
func Read() Limits {
	return read(system{proc: "/proc", root: "/"})
}

// unlimited is what a limit file or rlimit reads as when there is none:
// cgroup v1 writes a page-rounded 2^63-1.
func unlimited(v uint64) bool { return v >= math.MaxInt64-(1<<20) }

// human writes n bytes as the limits' messages do (limits.HumanBytes).
func human(n int64) string { return limits.HumanBytes(n) }
