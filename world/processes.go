package world

import (
	"runtime"

	"github.com/hccl-test/hccl-test/backends"
)

// ProcessNeeds is what a run takes of the limits the system counts per
// user (tasks: RLIMIT_NPROC) and per process (descriptors: RLIMIT_NOFILE).
type ProcessNeeds struct {
	// Processes is how many processes the run has on this machine, this
	// one included.
	Processes int
	// Threads is the threads of all of them together: the Go runtime's
	// (sysmon, one per P, more while goroutines block in system calls),
	// and more as a process hosts more ranks.
	Threads int64
	// Files is the descriptors the busiest process opens: the standard
	// ones, outputs and /proc reads; a tcp or proc rank's sockets and
	// segments; a launching parent's pipes to each child.
	Files int64
}

// The figures behind ProcessNeeds are generous readings of what runs take
// with GOMAXPROCS of 2 (the peak of /proc/PID/task and /proc/PID/fd): the
// runtime alone starts 6 threads, an 8-rank shm run 8, 32 ranks 12; a tcp
// rank process 8; a proc rank process 10. A tcp parent of 16 ranks held 68
// descriptors and a rank 25 (alltoall); a proc parent 82 and a rank 38.
const (
	threadsBase     = 8  // a process's threads besides 2 per P
	ranksPerThread  = 4  // an in-process world adds a thread per this many ranks
	filesBase       = 16 // a process's descriptors before any rank's
	filesPerChild   = 5  // a launching parent's, per child
	filesPerPeer    = 2  // a tcp or proc rank's, per peer it exchanges with
	filesProcExtra  = 8  // a proc rank's shared-memory bookkeeping
	filesProcPerRnk = 1  // a proc parent's, per rank's segment
)

// ProcessNeedsOf estimates ProcessNeeds for hosted ranks of a world of ranks
// on a backend of capabilities c, perProcess to a rank process (0 or 1:
// one), each exchanging with peers peers. launched is true in a rank process that a launcher (or
// a parent's -p) started, which counts only itself.
func ProcessNeedsOf(c backends.Caps, ranks, hosted, perProcess, peers int, launched bool) ProcessNeeds {
	per := max(1, perProcess)
	procs := (hosted + per - 1) / per
	if c.InProcess {
		procs, per = 1, hosted
	}
	if launched {
		procs = 1
	}
	threads := func(ranksIn int) int64 {
		return int64(2*runtime.GOMAXPROCS(0) + threadsBase + ranksIn/ranksPerThread)
	}
	n := ProcessNeeds{Processes: procs, Threads: int64(procs) * threads(per), Files: filesBase}
	if c.InProcess {
		return n
	}
	rank := int64(filesBase + filesPerPeer*peers)
	if c.SharedMemory {
		rank += filesProcExtra + filesProcPerRnk*int64(ranks)
	}
	n.Files = rank
	if !launched && procs > 1 {
		parent := rank + int64(filesPerChild*(procs-1))
		if c.SharedMemory {
			parent += filesProcPerRnk * int64(ranks)
		}
		n.Files = parent
	}
	return n
}
