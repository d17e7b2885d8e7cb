package bench

import (
	"fmt"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/payload"
)

// coldRegionBytes is the memory one rank takes for the rotated buffer
// sets of --cache cold (payload.ColdRegion), 0 with a warm cache or without
// payload.
func (p *Plan) coldRegionBytes() int64 {
	if p.Cache != CacheCold || p.NoPayload {
		return 0
	}
	var half int64
	for _, g := range p.groupList() {
		half = max(half, p.bufferNeed(p.GroupSize(g)))
	}
	return payload.ColdRegionBytes(payload.LLCBytes(), 2*half, p.HostedRanksOrAll())
}

// allocCold allocates this rank's cold-cache region, once per sweep.
func (r *rankRunner) allocCold() error {
	size := r.plan.coldRegionBytes()
	if size <= 0 {
		return nil
	}
	r.llc = payload.LLCBytes()
	if err := r.bufs.Cold.Alloc(size); err != nil {
		return fmt.Errorf("allocating the buffer sets of --cache cold (%d bytes): %w", size, err)
	}
	return nil
}

// rowHalf is the size of each of the two buffers of one set that row
// needs on a rank of n: the larger side, or with buckets their stretch.
func rowHalf(row Row, n int) int64 {
	s, rc := row.Op.BufferBytes(n, row.Bytes)
	half := max(s, rc)
	if row.Buckets > 1 {
		one := row.Bytes / int64(row.Buckets)
		s1, r1 := row.Op.BufferBytes(n, one)
		half = max(half, int64(row.Buckets)*max(s1, r1))
	}
	return half
}

// bufferSets returns the buffer sets that row's iterations rotate through
// on rank `rank` of n, each the calls of one iteration (payload.BufferPool's
// Buckets): with a warm cache the one pool, with a cold one as many sets
// cut from the cold region as payload.ColdSets asks for the row, as many as
// the region holds.
//
// With -u every set starts Unalign elements of the row's data type past
// its base, which the sizes above leave room for.
//
// A variable-size row's iterations take its draws in turn too (drawnRows):
// set i runs draw i mod their number, the sets as many as the larger
// number, and the draws are returned for the row's figures.
func (r *rankRunner) bufferSets(row Row, rank, n int) ([][]*coll.Args, []*draw, error) {
	// A collective of fixed size takes the row itself, without the call
	// and its frame: the harness's frames on each rank's stack decide
	// how far thousands of simulated ranks' stacks grow (measureRow).
	rows, draws := []Row{row}, []*draw(nil)
	if row.Op.Desc().Variable() {
		var err error
		if rows, draws, err = r.plan.drawnRows(row, n); err != nil {
			return nil, nil, err
		}
	}
	off := r.plan.Unalign * row.DType.Size()
	if len(r.bufs.Cold.Mem) == 0 {
		sets := make([][]*coll.Args, len(rows))
		for i := range sets {
			sets[i] = unaligned(r.bufs, off).Buckets(rows[i], rank, n)
		}
		return sets, draws, nil
	}
	half := rowHalf(row, n)
	if draws != nil {
		half = rowsNeed(rows, n)
	}
	half = max(half+int64(off), 1)
	k := payload.ColdSets(r.llc, 2*half, r.plan.HostedRanksOrAll())
	k = max(min(k, r.bufs.Cold.Sets(half)), 1)
	sets := make([][]*coll.Args, max(k, len(rows)))
	for i := range sets {
		sets[i] = unaligned(r.bufs.Cold.Set(i%k, half), off).Buckets(rows[i%len(rows)], rank, n)
	}
	return sets, draws, nil
}

// unaligned returns the view of bp's two buffers that starts off bytes
// past theirs (-u).
func unaligned(bp *payload.BufferPool, off int) *payload.BufferPool {
	return &payload.BufferPool{A: bp.A[off:], B: bp.B[off:]}
}
