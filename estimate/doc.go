// Package estimate is what a run is expected to take before it runs: the
// calibrated cost model auto chooses algorithms by (Calibration, fitted on
// measured alpha, beta and gamma, or given by a simulating backend) and
// the memory estimate (MemoryEstimate) that the harnesses print with
// --dry-run and refuse a plan by.
package estimate
