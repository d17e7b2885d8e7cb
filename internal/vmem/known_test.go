package vmem

// holeKnown reports whether this architecture's regions are windows of the
// hole in its address space.
func holeKnown() bool { return hole(1) != nil }
