package bench

import (
	"fmt"
	"strings"

	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/payload"
)

// fusionSplit is how one bucket count of --fusion meets the sweep: whether
// some row splits into that many buckets of whole elements, and the sizes
// at which some collective and data type cannot (those rows are measured
// as one collective only).
type fusionSplit struct {
	buckets  int
	held     bool
	skipped  int   // sizes at which some row is too small to split
	largest  int64 // the largest of them, bytes
	maxBytes int64 // the largest size of the sweep
}

// fusionSplits returns a fusionSplit for every bucket count of --fusion
// above 1, in the order given.
func (p *Plan) fusionSplits() []fusionSplit {
	sizes := p.Sizes()
	var out []fusionSplit
	for _, b := range p.bucketList()[1:] {
		fs := fusionSplit{buckets: b}
		for _, size := range sizes {
			fs.maxBytes = max(fs.maxBytes, size)
			short := false
			for _, g := range p.groupList() {
				n := p.GroupSize(g)
				for _, op := range p.Ops {
					for _, dt := range p.DTypes {
						if whole, _ := payload.RowCount(op, dt, n, size); whole == 0 {
							continue // no row at all at this size
						}
						if c, _ := payload.RowCount(op, dt, n, size/int64(b)); c > 0 {
							fs.held = true
						} else {
							short = true
						}
					}
				}
			}
			if short {
				fs.skipped++
				fs.largest = max(fs.largest, size)
			}
		}
		out = append(out, fs)
	}
	return out
}

// validateFusion refuses a bucket count that no row of the sweep can be
// split into: every one of its rows would be dropped without a word.
func (p *Plan) validateFusion() error {
	for _, fs := range p.fusionSplits() {
		if !fs.held {
			return fielderr.FieldErrorf("Fusion", " %d: no size of the sweep (at most %d bytes) splits into %d buckets of whole elements; give fewer buckets or a larger %s",
				fs.buckets, fs.maxBytes, fs.buckets, fielderr.Field("MaxBytes"))
		}
	}
	return nil
}

// FusionSkips says which bucket counts of --fusion some sizes of the sweep
// are too small for (those rows are measured as one collective only), ""
// when none: for the output's header.
func (p *Plan) FusionSkips() string {
	var parts []string
	for _, fs := range p.fusionSplits() {
		if fs.skipped > 0 {
			parts = append(parts, fmt.Sprintf("%d buckets: some rows at %d sizes up to %d bytes", fs.buckets, fs.skipped, fs.largest))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + " are too small to split into whole elements and are measured as one collective only"
}
