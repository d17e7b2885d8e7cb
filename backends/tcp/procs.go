package tcp

import (
	"os"
	"runtime"
)

// shareCPUs sets how many threads this rank's process runs Go code on: the
// host's CPUs divided among the ranks that share it, at least one. Ranks
// that each think they own every CPU wake and spin threads that starve their
// neighbours when the host is oversubscribed, which costs tens of
// microseconds per message. An explicit GOMAXPROCS is left alone.
func shareCPUs(localRanks int) {
	if localRanks < 1 {
		return
	}
	oversubscribed = localRanks > runtime.NumCPU()
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	runtime.GOMAXPROCS(max(1, runtime.NumCPU()/localRanks))
}
