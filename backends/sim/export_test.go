package sim

// SymmetricRuns returns how many calls RunSymmetric has run for a whole
// world so far.
func SymmetricRuns() int64 { return symmetricRuns.Load() }

// WorldTimings returns how many calls TimeWorld has timed so far.
func WorldTimings() int64 { return worldTimings.Load() }
