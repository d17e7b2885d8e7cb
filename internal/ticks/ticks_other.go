//go:build !amd64

package ticks

// hasTSC: the counter is read only on amd64.
const hasTSC = false

func rdtsc() uint64 { panic("ticks: no time-stamp counter on this architecture") }
