// Package world is where a harness runs: the World (the backend, the
// ranks, how they were started and meet, how long they may take) and the
// Faults both harnesses' settings embed, the domains and servers a world
// is split into (Layout, Topology), the options the world hands its
// backend, the backend of launched processes, and what a run takes of the
// system's per-process limits (ProcessNeeds).
//
// Both harnesses (bench, scenario) import it; it imports only backends and
// the shared helpers below them.
package world
