package bench

import (
	"fmt"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/units"
)

// The memory a run takes besides its message buffers, by what holds it.
// The figures are generous readings of what small runs take (see
// TestMemoryEstimateCovers): the estimate is what the memory check and the
// run's guard (internal/memguard) compare with, so it errs high.
const (
	// processBytes is one process of this program before any rank runs:
	// the runtime, the binary, the output writers.
	processBytes = 32 << 20
	// rankBytes is one rank's goroutines (their stacks grow with the
	// algorithms' recursion), queues, communicators and watchdog.
	rankBytes = 128 << 10
	// pairBytes is the table of links every in-process world keeps, one
	// entry per ordered pair of ranks, whether used or not.
	pairBytes = 8
	// shmLinkBytes is one link an in-process rank uses: its queue and
	// channels; tcpLinkBytes one connection a tcp rank uses: its reader's
	// staging chunk and buffer, and two goroutines.
	shmLinkBytes = 2 << 10
	tcpLinkBytes = 384 << 10
	// recordBytes is one measured row held until every run is done (the
	// median of --runs) with its series of timings.
	recordBytes = 1 << 10
)

// MemPart is one part of what a run allocates on this machine.
type MemPart struct {
	Name  string // what takes the memory, for --dry-run
	Bytes int64  // all the ranks of this machine together
	// Flag is what the user can change to shrink the part, for the
	// refusal's hint.
	Flag string
}

// MemoryEstimate is every byte a run will allocate on this machine, by
// part, for the ranks this machine hosts.
type MemoryEstimate struct {
	Parts  []MemPart
	Hosted int // ranks on this machine
}

// Total returns the sum of the parts.
func (e MemoryEstimate) Total() int64 {
	var t int64
	for _, p := range e.Parts {
		t = satAdd(t, p.Bytes)
	}
	return t
}

// Largest returns the largest part.
func (e MemoryEstimate) Largest() MemPart {
	var big MemPart
	for _, p := range e.Parts {
		if p.Bytes > big.Bytes {
			big = p
		}
	}
	return big
}

// String lists the parts that take memory: "sweep buffers 96.0MiB + ...".
func (e MemoryEstimate) String() string {
	var parts []string
	for _, p := range e.Parts {
		if p.Bytes > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", p.Name, units.HumanSize(p.Bytes)))
		}
	}
	return strings.Join(parts, " + ")
}

// Memory estimates what the run takes on this machine: the sweep's
// buffers and the algorithms' scratch space at the largest size, the link
// probe (--link-bw auto), the cost model's calibration (--algo auto), the
// transport's links, the ranks' goroutines and queues, the rows and the
// process itself, or with -p over tcp every child process. Without payload
// (--sim-data=false) the buffers take address space only.
func (p Plan) Memory() MemoryEstimate {
	hosted := int64(p.HostedRanksOrAll())
	e := MemoryEstimate{Hosted: int(hosted)}
	add := func(name, flag string, perRank int64) {
		e.Parts = append(e.Parts, MemPart{Name: name, Flag: flag, Bytes: satMul(perRank, hosted)})
	}
	var bufs, scratch, saved int64
	for _, g := range p.groupList() {
		need := p.bufferNeed(p.GroupSize(g))
		bufs = max(bufs, satMul(2, need))
		// Each communicator reserves scratch space for its largest row
		// (coll.Comm.Reserve), and with --retry keeps a copy of the input.
		scratch = satAdd(scratch, satMul(2, need))
		if p.Retry > 0 {
			saved = satAdd(saved, need)
		}
	}
	if p.NoPayload {
		bufs, scratch, saved = 0, 0, 0
	}
	add("sweep buffers", "maxbytes", bufs)
	add("algorithm scratch", "maxbytes", scratch)
	add("retry copies", "retry", saved)
	if p.LinkSource == LinkAuto && p.Ranks > 1 {
		add("link probe", "link-bw", 2*probeSize(p.Ranks))
	}
	if p.calibrates() {
		if large, _ := calSizes(p.Ranks); p.NoPayload || bufs < 2*large {
			add("calibration", "algo", 2*large)
		}
	}
	rows := int64(unsafe.Sizeof(Row{})) * p.rowCount() / int64(max(p.Runs, 1))
	if p.Runs > 1 {
		rows += recordBytes * p.rowCount()
	}
	e.Parts = append(e.Parts, overheadParts(p.Backend, p.Ranks, int(hosted), p.peersPerRank(), rows)...)
	return e
}

// overheadParts returns what a run takes besides its payload and probes,
// for hosted of a world of ranks ranks on backend, each exchanging with
// peers peers and holding rows bytes of rows: the transport's links, the
// ranks' goroutines and queues, and the processes.
func overheadParts(backend string, ranks, hosted, peers int, rows int64) []MemPart {
	h, n, links := int64(hosted), int64(ranks), int64(peers)
	perRank := n*pairBytes + links*tcpLinkBytes
	procs := h // one process a rank: -p over tcp starts the others
	switch backend {
	case "shm", "sim":
		tables := int64(1)
		if backend == "sim" {
			tables = 2 // the fabric's pairs besides the world's links
		}
		perRank, procs = tables*pairBytes*n+links*shmLinkBytes, 1
	}
	return []MemPart{
		{Name: "links", Flag: "ranks", Bytes: satMul(perRank, h)},
		{Name: "ranks' goroutines and queues", Flag: "ranks", Bytes: satMul(rankBytes, h)},
		{Name: "processes and rows", Flag: "ranks", Bytes: satMul(procs, satAdd(processBytes, rows))},
	}
}

// Memory estimates what the scenario takes on this machine for hosted of
// its ranks on backend: MemoryPerRank's buffers (none without payload),
// and the links, ranks and processes as a sweep's (Plan.Memory).
func (sc *Scenario) Memory(backend string, hosted int, noPayload bool) MemoryEstimate {
	var bufs int64
	if !noPayload {
		bufs = satMul(sc.MemoryPerRank(), int64(hosted))
	}
	peers := min(sc.Ranks, 2*bits.Len(uint(sc.Ranks))+4)
	for _, s := range sc.Steps {
		if !s.IsCompute() && s.Op == coll.AllToAll {
			peers = sc.Ranks
		}
	}
	e := MemoryEstimate{Hosted: hosted, Parts: []MemPart{{Name: "buffers and probes", Flag: "maxbytes", Bytes: bufs}}}
	e.Parts = append(e.Parts, overheadParts(backend, sc.Ranks, hosted, peers, 0)...)
	return e
}

// bufferNeed returns the larger of the two buffers one rank of a group of
// n ranks allocates for the plan's largest row (bufferPool.ensure).
func (p Plan) bufferNeed(n int) int64 {
	var need int64
	for _, op := range p.Ops {
		for _, dt := range p.DTypes {
			_, bytes := RowCount(op, dt, n, p.MaxBytes)
			s, r := bufferBytes(op, n, bytes)
			need = max(need, s, r)
		}
	}
	return need
}

// calibrates reports whether the ranks calibrate the cost model before
// the sweep (prepare): auto or --stats on a backend that is not simulated.
func (p Plan) calibrates() bool {
	return p.needsModel() && p.simLinks() == nil && p.Ranks > 1
}

// peersPerRank is how many peers one rank exchanges messages with, which
// each take a link: every other rank for alltoall, a few per doubling
// step for the others; rank 0 also gathers every rank's timings.
func (p Plan) peersPerRank() int {
	n := p.Ranks
	for _, op := range p.Ops {
		if op == coll.AllToAll {
			return n
		}
	}
	return min(n, 2*bits.Len(uint(n))+4)
}

// checkMemory refuses a plan whose estimate is more than the memory
// available, naming the part that takes the most and the flag that
// shrinks it.
func (p Plan) checkMemory() error {
	if p.MemLimit <= 0 {
		return nil
	}
	e := p.Memory()
	need := e.Total()
	if need <= p.MemLimit {
		return nil
	}
	big := e.Largest()
	var flag, hint string
	switch big.Flag {
	case "maxbytes":
		flag, hint = fmt.Sprintf("--maxbytes %d", p.MaxBytes), "use a smaller -e"
		if p.Backend == "sim" {
			hint += ", or --sim-data=false"
		}
	case "link-bw":
		flag, hint = "--link-bw auto", "give the link's bandwidth (e.g. --link-bw hccs)"
	case "algo":
		flag, hint = "--algo "+p.AlgoString(), "name an algorithm (e.g. --algo ring)"
	case "retry":
		flag, hint = fmt.Sprintf("--retry %d", p.Retry), "use a smaller -e or no --retry"
	default:
		flag, hint = fmt.Sprintf("--ranks %d", p.Ranks), "use fewer ranks or a smaller -e"
	}
	return fmt.Errorf("%s: the run needs about %s of memory for %d ranks on this machine (%s the most), more than the %s available: %s",
		flag, units.HumanSize(need), e.Hosted, big.Name, units.HumanSize(p.MemLimit), hint)
}
