package bench

import (
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/world"
)

// The plan's types that the shared packages define, under the names the
// plan's fields and methods have always had: a Plan holds Placements, a
// Layout and a Topology, and yields Rows and a MemoryEstimate.
type (
	// Row is one measurement of a plan (payload.Row).
	Row = payload.Row
	// Placement says whether a collective writes over its input
	// (payload.Placement).
	Placement = payload.Placement
	// Layout splits the world into communication domains (world.Layout).
	Layout = world.Layout
	// Topology is how the ranks sit on servers (world.Topology).
	Topology = world.Topology
	// MemoryEstimate is every byte a run will allocate on this machine
	// (estimate.MemoryEstimate).
	MemoryEstimate = estimate.MemoryEstimate
	// MemPart is one part of what a run allocates (estimate.MemPart).
	MemPart = estimate.MemPart
)

// The placements of a row (payload.OutOfPlace, payload.InPlace).
const (
	OutOfPlace = payload.OutOfPlace
	InPlace    = payload.InPlace
)
