// Package runctl is the control of a run that both harnesses share, the
// sweep (package bench) and the step scenarios (package scenario): the op
// watchdog (Watchdog), the harness's own control channel for its barrier,
// gathers and broadcasts of floats (Ctl), the agreement of ranks that are
// processes (AgreeOn), the settling of a probe's repetitions (Settle), the
// register of running ranks for the status report (Running), the virtual
// clock of the simulating backend (VirtualClock), the share of a probe's
// memory budget (ShareBudget) and the process's CPU time (ProcessCPU).
//
// It decides nothing about what to measure or report. Imports flow
// cmd -> bench, scenario -> runctl -> coll -> backends -> dtype.
package runctl

// Version is the tool's version, printed in every header and agreed on by
// the ranks.
const Version = "0.1.0"
