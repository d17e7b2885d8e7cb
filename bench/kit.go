package bench

import "github.com/hccl-test/hccl-test/kit"

// The plan's types that the shared kit defines, under the names the
// plan's fields and methods have always had: a Plan holds Placements, a
// Layout and a Topology, and yields Rows and a MemoryEstimate.
type (
	// Row is one measurement of a plan (kit.Row).
	Row = kit.Row
	// Placement says whether a collective writes over its input
	// (kit.Placement).
	Placement = kit.Placement
	// Layout splits the world into communication domains (kit.Layout).
	Layout = kit.Layout
	// Topology is how the ranks sit on servers (kit.Topology).
	Topology = kit.Topology
	// MemoryEstimate is every byte a run will allocate on this machine
	// (kit.MemoryEstimate).
	MemoryEstimate = kit.MemoryEstimate
	// MemPart is one part of what a run allocates (kit.MemPart).
	MemPart = kit.MemPart
)

// The placements of a row (kit.OutOfPlace, kit.InPlace).
const (
	OutOfPlace = kit.OutOfPlace
	InPlace    = kit.InPlace
)
