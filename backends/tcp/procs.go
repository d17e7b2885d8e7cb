package tcp

import (
	"os"
	"runtime"
	"strconv"
)

// localRankVars name, per launcher, how many ranks share this host.
var localRankVars = []string{
	"OMPI_COMM_WORLD_LOCAL_SIZE", // Open MPI
	"MPI_LOCALNRANKS",            // MPICH/Hydra
	"LOCAL_WORLD_SIZE",           // torchrun
	"SLURM_NTASKS_PER_NODE",      // Slurm, when given as a plain number
}

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

// launchedLocalRanks returns how many ranks the launcher put on this host,
// or 0 when it does not say.
func launchedLocalRanks(getenv func(string) string) int {
	for _, v := range localRankVars {
		if n, err := strconv.Atoi(getenv(v)); err == nil && n > 0 {
			return n
		}
	}
	return 0
}
