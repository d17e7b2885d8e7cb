package runctl

import (
	"time"

	"golang.org/x/sys/unix"
)

// ProcessCPU returns the CPU time this process has used so far, user and
// system together (getrusage RUSAGE_SELF), 0 if the system does not say.
// Differences of two readings are what -C reports: the CPU an op took,
// every thread of the process counting.
func ProcessCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
