// Package kit is what the two harnesses share: the sweep (package bench)
// and the step scenarios (package scenario) both run collectives on every
// rank of a world and need the same tools around them, so the tools live
// here, below both, and neither harness imports the other.
//
// The kit holds the op watchdog (Watchdog), the buffer pool (BufferPool)
// and the fill, poison and check of payloads (FillInputs, Poison,
// CountWrong), the shape of one call (Row), the virtual clock of the
// simulating backend (VirtualClock), the synthetic compute load
// (ComputeLoad), the cost model's calibration (Calibration), the domains
// and servers a world is split into (Layout, Topology), the memory
// estimate (MemoryEstimate), the agreement of ranks that are processes
// (AgreeOn), the register of running ranks for the status report
// (Running), the World and Faults parts both harnesses' settings embed,
// with the FieldError their checks return, and one control channel for
// the harness's own barrier, gathers and broadcasts of floats (Ctl).
//
// It is a kit, not a harness: it decides nothing about what to measure or
// report. Imports flow cmd -> bench, scenario -> kit -> coll -> backends
// -> dtype.
package kit

// Version is the tool's version, printed in every header and agreed on by
// the ranks.
const Version = "0.1.0"
