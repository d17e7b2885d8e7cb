package bench

import (
	"sync"
	"sync/atomic"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/world"
)

// worldShare is the work of a run that comes out the same on every rank
// this process hosts, done by the first rank that needs it and shared,
// read-only, with the others: on a simulated world of thousands of
// ranks, each working it out again costs more than the simulation of
// the row. Every method is safe for concurrent use; a nil *worldShare
// (a rank run outside Run) shares nothing and works everything out.
type worldShare struct {
	mu sync.Mutex // guards the fields below
	// simCal is the calibration of the simulated links (simCalibration),
	// made once.
	simCal *estimate.Calibration
	// model is the latest row's model (rowModel) and what it is of: the
	// ranks measure one row at a time (each row ends in a gathering that
	// every rank joins), so one is enough.
	model struct {
		key modelKey
		m   coll.Model
		set bool
	}
}

// modelKey is what a row's model depends on.
type modelKey struct {
	cal     *estimate.Calibration
	row     Row
	crosses bool
}

// rowModelsMade counts the row models worked out (makeRowModel), for the
// tests.
var rowModelsMade atomic.Int64

// simCalibration returns the calibration build makes, made once for the
// world.
func (s *worldShare) simCalibration(build func() *estimate.Calibration) *estimate.Calibration {
	if s == nil {
		return build()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.simCal == nil {
		s.simCal = build()
	}
	return s.simCal
}

// rowModel returns the cost model of row under cal, in a domain that
// crosses servers or not: what auto chooses the row's algorithm by.
// Ranks that share cal (simCalibration) get it worked out once per row.
func (s *worldShare) rowModel(cal *estimate.Calibration, row Row, crosses bool) coll.Model {
	if s == nil {
		return makeRowModel(cal, row, crosses)
	}
	key := modelKey{cal: cal, row: row, crosses: crosses}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.model.set || s.model.key != key {
		s.model.key, s.model.m, s.model.set = key, makeRowModel(cal, row, crosses), true
	}
	return s.model.m
}

// makeRowModel is rowModel's work, counted (rowModelsMade).
func makeRowModel(cal *estimate.Calibration, row Row, crosses bool) coll.Model {
	rowModelsMade.Add(1)
	return rowCostModel(cal, row, crosses)
}

// rowCostModel is the cost model of row under cal, in a domain that
// crosses servers or not: what auto chooses the row's algorithm by, in
// the run (rowModel) and in the memory estimate before it (memoryAlgos).
func rowCostModel(cal *estimate.Calibration, row Row, crosses bool) coll.Model {
	return world.DomainModel(cal.Model(row.DType, row.Bytes), row.Group, crosses)
}
