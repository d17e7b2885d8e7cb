package sim

// ReplayRuns returns how many calls RunWorld has replayed for a whole
// world so far.
func ReplayRuns() int64 { return replayRuns.Load() }

// PeriodicRuns returns how many of them RunWorld replayed for one
// period of the world.
func PeriodicRuns() int64 { return periodicRuns.Load() }

// SetReplayBudget bounds the requests a replay records to n, and returns
// what puts the bound back.
func SetReplayBudget(n int) func() {
	b := replayBudget
	replayBudget = n
	return func() { replayBudget = b }
}
