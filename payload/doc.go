// Package payload is what the ranks of a harness compute on: the shape of
// one call (Row), the buffer pool (BufferPool, allocated once at the
// largest size and laid out by the collective's coll.Descriptor), the
// fill, poison and check of payloads (FillInputs, Poison, CountWrong), the
// buffer sets that keep --cache cold out of the cache (ColdRegion), and
// the synthetic compute load of --overlap and the scenarios' compute
// phases (ComputeLoad).
package payload
