package coll

import "slices"

// directAlgos is the algorithms in which every rank exchanges messages with
// every other rank (oneshot, twoshot, direct, pairwise): a rank of n keeps
// state for n-1 peers, where a doubling algorithm keeps a logarithmic
// number (TestAlgoPeersCoverCounted counts them).
var directAlgos = map[replayKey]bool{
	{AllReduce, "oneshot"}: true, {AllReduce, "twoshot"}: true,
	{ReduceScatter, "direct"}: true, {ReduceScatterV, "direct"}: true,
	{AllToAll, "direct"}: true, {AllToAll, "pairwise"}: true,
	{AllToAllV, "direct"}: true, {AllToAllV, "pairwise"}: true,
	{AllGatherV, "direct"}: true,
}

// AlgoPeers returns the most peers one rank of n exchanges messages with
// in op run by any of the algorithms names (Auto, or none: any of op's, as
// auto may pick any): n for a direct algorithm (every other rank, and
// rank 0 gathers every rank's timings), else Op.Peers.
func AlgoPeers(op Op, names []string, n int) int {
	peers := op.Peers(n)
	for _, a := range algorithms[op] {
		if directAlgos[replayKey{op, a.name}] && (len(names) == 0 || slices.Contains(names, Auto) || slices.Contains(names, a.name)) {
			peers = max(peers, n)
		}
	}
	return peers
}

// AlgoPeersOf returns the most peers one rank of n exchanges messages with
// in any of ops run by the algorithms that algos names for it
// (AlgoPeers), and Op.Peers' default with no ops.
func AlgoPeersOf(ops []Op, algos func(Op) []string, n int) int {
	peers := Op(0).Peers(n)
	for _, o := range ops {
		peers = max(peers, AlgoPeers(o, algos(o), n))
	}
	return peers
}
