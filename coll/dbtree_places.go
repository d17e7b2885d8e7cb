package coll

import "sync"

// The places of both trees of a double binary tree depend on the rank
// count alone, and dbtreeFollow, which a fit of a model calls thousands of
// times for a few rank counts, spent a sixth of its time finding them
// again. They are found once per rank count and kept, read-only.

// maxKeptTrees bounds the rank counts whose trees are kept (a sweep asks
// for a few); past it, trees are found afresh on each call.
const maxKeptTrees = 256

// keptTrees holds both trees' places by rank count.
var keptTrees struct {
	mu sync.Mutex
	m  map[int]*[2][]dbPlace
}

// dbTreesOf returns the places of both trees of n ranks (offsets 0 and
// 1), which the caller must not modify: they may be shared with every
// other caller, on any goroutine.
func dbTreesOf(n int) *[2][]dbPlace {
	keptTrees.mu.Lock()
	t := keptTrees.m[n]
	keptTrees.mu.Unlock()
	if t != nil {
		return t
	}
	t = &[2][]dbPlace{dbPlaces(dbTree{n: n, off: 0}), dbPlaces(dbTree{n: n, off: 1})}
	keptTrees.mu.Lock()
	defer keptTrees.mu.Unlock()
	if old := keptTrees.m[n]; old != nil {
		return old
	}
	if keptTrees.m == nil {
		keptTrees.m = map[int]*[2][]dbPlace{}
	}
	if len(keptTrees.m) < maxKeptTrees {
		keptTrees.m[n] = t
	}
	return t
}
