package sim

// ReplayRuns returns how many calls RunWorld has replayed for a whole
// world so far.
func ReplayRuns() int64 { return replayRuns.Load() }
