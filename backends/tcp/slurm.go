package tcp

// Slurm's rendezvous port, derived from the job and step id when the ranks
// span several hosts: SlurmPortBase + (job x 32 + step) mod SlurmPortSpan,
// so every step of a job, and most jobs that share a node, get different
// ports. The range lies below Linux's ephemeral ports (32768 up).
const (
	SlurmPortBase = 20000
	SlurmPortSpan = 10000
)

// slurmPort is the rendezvous port of Slurm job job's step step.
func slurmPort(job, step uint64) int {
	return SlurmPortBase + int((job*32+step)%SlurmPortSpan)
}
