package clustermodel

import "github.com/hccl-test/hccl-test/coll"

// HostBytes is how many bytes each rank writes into its result in one
// call of op on n ranks, of size bytes as a sweep reports it, out of
// place (the sweep's default): every byte its bus bandwidth counts
// (op.BusFactor: a reduced byte is one pass of its receiver, fused with
// its receive as shm and proc do), and for allgather and alltoall the
// block of its own, which it copies into its result too.
func HostBytes(op coll.Op, n int, size int64) float64 {
	b := float64(size) * op.BusFactor(n)
	if op == coll.AllGather || op == coll.AllToAll {
		b += float64(size) / float64(n)
	}
	return b
}

// HostBound is the least time in seconds a call of op of size bytes
// takes on w under HostGBps: the bytes the ranks of one server write
// together over the rate at which their host writes them; 0 when the
// model has no such rate.
func (m *Model) HostBound(op coll.Op, w World, size int64) float64 {
	if m.HostGBps <= 0 {
		return 0
	}
	return float64(w.PerServer) * HostBytes(op, w.Ranks(), size) / (m.HostGBps * 1e9)
}
