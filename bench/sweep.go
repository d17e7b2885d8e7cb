package bench

import (
	"fmt"
	"math"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/units"
)

// Sizes returns the requested sizes of the sweep: MinBytes, then each size
// times StepFactor (or plus StepBytes), for as long as the size does not
// exceed MaxBytes. MaxBytes itself is included when the steps land on it.
// A multiplicative step always advances by at least one byte. Validate
// bounds how many there are (maxSizes); call it first.
func (p *Plan) Sizes() []int64 {
	var out []int64
	p.eachSize(func(s int64) bool {
		out = append(out, s)
		return true
	})
	return out
}

// eachSize calls f with every size of the sweep in order (see Sizes), until
// f returns false, without listing them.
func (p *Plan) eachSize(f func(int64) bool) {
	for s := p.MinBytes; s <= p.MaxBytes; {
		if !f(s) {
			return
		}
		s = p.nextSize(s)
		if s < 0 {
			return
		}
	}
}

// largestSize returns the largest size of the sweep (the last of Sizes),
// which is below MaxBytes where the steps do not land on it: -b 1K -e 64M
// -f 64 sweeps 1K, 64K and 4M. What a run allocates and touches before its
// first row is sized by this, not by MaxBytes. Past MaxSizes sizes (a plan
// Validate refuses) it returns MaxBytes without counting further; with no
// size at all, MaxBytes too.
func (p *Plan) largestSize() int64 {
	if p.MinBytes > p.MaxBytes {
		return p.MaxBytes
	}
	if p.StepBytes > 0 {
		return p.MinBytes + (p.MaxBytes-p.MinBytes)/p.StepBytes*p.StepBytes
	}
	if !(p.StepFactor > 1) || math.IsInf(p.StepFactor, 0) {
		return p.MaxBytes
	}
	last, n := p.MaxBytes, 0
	p.eachSize(func(s int64) bool {
		n++
		last = s
		return n <= MaxSizes
	})
	if n > MaxSizes {
		return p.MaxBytes
	}
	return last
}

// nextSize returns the size after s, or -1 past the largest size a plan
// accepts.
func (p *Plan) nextSize(s int64) int64 {
	if p.StepBytes > 0 {
		if s > units.MaxSize-p.StepBytes {
			return -1
		}
		return s + p.StepBytes
	}
	f := math.Round(float64(s) * p.StepFactor)
	if f > units.MaxSize {
		return -1
	}
	return max(int64(f), s+1)
}

// SweepString describes the sizes for the header.
func (p *Plan) SweepString() string {
	step := fmt.Sprintf("factor %g", p.StepFactor)
	if p.StepBytes > 0 {
		step = fmt.Sprintf("step %d B", p.StepBytes)
	}
	n, _ := p.sizeCount()
	return fmt.Sprintf("%d..%d B by %s (%s)", p.MinBytes, p.MaxBytes, step, results.Count(n, "size"))
}

// Rows enumerates the plan's rows in output order: by collective, data type,
// reduction, root and size, then placement, so the placements of one shape
// come together. Sizes that round to the size of the row before are
// dropped.
func (p *Plan) Rows() []Row {
	var rows []Row
	for _, g := range p.groupList() {
		rows = append(rows, p.groupRows(g)...)
	}
	return rows
}

// groupRows enumerates the rows of one domain (see Rows).
func (p *Plan) groupRows(group string) []Row {
	var rows []Row
	sizes := p.Sizes()
	n := p.GroupSize(group)
	for _, op := range p.Ops {
		redops := []dtype.ReduceOp{0}
		if op.Reduces() {
			redops = p.RedOps
		}
		roots := []int{-1}
		if op.Rooted() {
			roots = []int{p.Root}
			if p.Root < 0 {
				roots = roots[:0]
				for r := range n {
					roots = append(roots, r)
				}
			}
		}
		for _, dt := range p.DTypes {
			for _, redop := range redops {
				for _, root := range roots {
					last := int64(-1)
					for _, size := range sizes {
						count, bytes := payload.RowCount(op, dt, n, size)
						if bytes == last {
							continue
						}
						last = bytes
						for _, buckets := range p.bucketList() {
							if buckets > 1 && op.Desc().Variable() {
								continue // its counts do not split into buckets
							}
							c, b := count, bytes
							if buckets > 1 {
								if c, b = payload.RowCount(op, dt, n, size/int64(buckets)); c == 0 {
									continue
								}
								b *= int64(buckets)
							}
							for _, algo := range p.AlgosFor(op) {
								for _, place := range p.Placements {
									if place == InPlace && op.Desc().InPlace == coll.NoInPlace {
										continue // alltoallv: no in-place call, as in nccl-tests
									}
									rows = append(rows, Row{Op: op, DType: dt, RedOp: redop, Root: root, Place: place,
										Count: c, Bytes: b, Group: group, GroupSize: n, Buckets: buckets, Algo: algo})
								}
							}
						}
					}
				}
			}
		}
	}
	return rows
}
