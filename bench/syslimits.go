package bench

import (
	"fmt"

	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/units"
	"github.com/hccl-test/hccl-test/world"
)

// addressSpaceMargin is what a run's address space grows by past its
// memory estimate, at least: the Go heap's arenas and the collector's
// headroom, thread stacks. A run estimated at 8.5 GiB grew its address
// space by 8.1 GiB; one at 176 MiB by 340 MiB.
const addressSpaceMargin = 512 << 20

// AddressSpace returns the address space the run adds to one process,
// past what it holds when it starts: its memory estimate, a quarter again,
// and at least addressSpaceMargin. RLIMIT_AS binds each process alone:
// with ranks in processes of their own (tcp) a process takes its share of
// the estimate, but where ranks map each other's buffers (proc) every
// process maps them all.
func (p *Plan) AddressSpace() int64 {
	need := p.Memory().Total()
	if c := p.Caps(); !c.InProcess && !c.SharedMemory {
		need /= int64(max(p.Processes().Processes, 1))
	}
	return limits.SatAdd(need, max(need/4, addressSpaceMargin))
}

// Processes returns what the run takes of the limits on tasks and
// descriptors (world.ProcessNeedsOf).
func (p *Plan) Processes() world.ProcessNeeds {
	return world.ProcessNeedsOf(p.Caps(), p.Ranks, p.HostedRanksOrAll(), p.PerProcess, p.peersPerRank(), p.LaunchedRank >= 0)
}

// checkLimits refuses a plan that needs more than a limit of the system
// leaves: address space (RLIMIT_AS), the user's tasks (RLIMIT_NPROC), open
// files (RLIMIT_NOFILE). Memory itself is checkMemory's.
func (p *Plan) checkLimits() error {
	l := p.Limits
	if as := l.AddressSpace; as.Set {
		if need := p.AddressSpace(); need > as.Room {
			return fielderr.FieldErrorf("MaxBytes", " %v: a process of the run needs about %s of address space (%d ranks on this machine), more than the %s %s: raise ulimit -v or use a smaller %s",
				p.MaxBytes, units.HumanSize(need), p.HostedRanksOrAll(), units.HumanSize(max(as.Room, 0)), as.Name, fielderr.ShortField("MaxBytes"))
		}
	}
	n := p.Processes()
	if t := l.Tasks; t.Set && n.Threads > t.Room {
		procs := "one process"
		if n.Processes > 1 {
			procs = fmt.Sprintf("%d processes", n.Processes)
		}
		return fielderr.FieldErrorf("Ranks", " %d: the run starts about %d threads in %s, more than the %d %s: raise ulimit -u or use fewer ranks or a smaller GOMAXPROCS",
			p.Ranks, n.Threads, procs, max(t.Room, 0), t.Name)
	}
	if f := l.Files; f.Set && n.Files > f.Room {
		return fielderr.FieldErrorf("Ranks", " %d: the run opens about %d files in one process, more than the %d %s: raise ulimit -n or use fewer ranks",
			p.Ranks, n.Files, max(f.Room, 0), f.Name)
	}
	return nil
}
