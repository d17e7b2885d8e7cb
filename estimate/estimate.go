package estimate

import (
	"fmt"
	"strings"

	"github.com/hccl-test/hccl-test/internal/limits"

	"github.com/hccl-test/hccl-test/backends"
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
	// pairBytes is a socket rank's entry for each rank of the world, and
	// tcpLinkBytes one connection it uses: its reader's staging chunk and
	// buffer, and two goroutines; what the links of a backend that does
	// not say its own (backends.LinkMemory) are charged.
	pairBytes    = 8
	tcpLinkBytes = 384 << 10
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
		t = limits.SatAdd(t, p.Bytes)
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

// OverheadParts returns what a run takes besides its payload and probes,
// for hosted of a world of ranks ranks on backend b (nil: one of sockets,
// as tcp's), perProcess to a rank process (0 or 1: one), each exchanging
// with peers peers and holding rows bytes of rows: the transport's links, the ranks' goroutines and
// queues, and the processes.
func OverheadParts(b backends.Backend, ranks, hosted, perProcess, peers int, rows int64) []MemPart {
	h, n, links := int64(hosted), int64(ranks), int64(peers)
	perRank := n*pairBytes + links*tcpLinkBytes
	// One process per perProcess ranks: -p over tcp starts the others.
	procs := (h + int64(max(1, perProcess)) - 1) / int64(max(1, perProcess))
	if m, ok := b.(backends.LinkMemory); ok {
		perRank = m.LinkBytes(ranks, peers)
	}
	if b != nil && b.Capabilities().InProcess {
		procs = 1
	}
	return []MemPart{
		{Name: "links", Flag: "ranks", Bytes: limits.SatMul(perRank, h)},
		{Name: "ranks' goroutines and queues", Flag: "ranks", Bytes: limits.SatMul(rankBytes, h)},
		{Name: "processes and rows", Flag: "ranks", Bytes: limits.SatMul(procs, limits.SatAdd(processBytes, rows))},
	}
}
