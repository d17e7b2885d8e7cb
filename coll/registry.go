package coll

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Func runs one collective on one rank. It may assume that its Args passed
// validation for the Comm's world.
type Func func(ctx context.Context, c *Comm, a *Args) error

// Kind says what an algorithm is built for; `auto` chooses by it.
type Kind uint8

const (
	// Bandwidth algorithms (ring, pairwise) move the least data per rank and
	// win at large sizes.
	Bandwidth Kind = iota + 1
	// Latency algorithms (trees, recursive doubling, Bruck, direct) take the
	// fewest steps and win at small sizes.
	Latency
)

// Auto is the algorithm name that lets the registry choose.
const Auto = "auto"

// AutoThreshold is the size (bytes of a rank's larger buffer) from which
// `auto` prefers a Bandwidth algorithm over a Latency one.
const AutoThreshold = 64 << 10

type algorithm struct {
	name string
	kind Kind
	run  Func
}

// algorithms holds every registered algorithm by collective. It is written
// only by init functions, so it needs no lock.
var algorithms = map[Op][]algorithm{}

// register adds an algorithm for op. Called from init functions only.
func register(op Op, name string, kind Kind, run Func) {
	for _, a := range algorithms[op] {
		if a.name == name {
			panic(fmt.Sprintf("coll: %v algorithm %q registered twice", op, name))
		}
	}
	algorithms[op] = append(algorithms[op], algorithm{name: name, kind: kind, run: run})
	slices.SortFunc(algorithms[op], func(a, b algorithm) int { return strings.Compare(a.name, b.name) })
}

// Names returns the names of the algorithms registered for op, sorted.
func Names(op Op) []string {
	var out []string
	for _, a := range algorithms[op] {
		out = append(out, a.name)
	}
	return out
}

// AllNames returns every algorithm name registered for any collective, sorted
// and without duplicates.
func AllNames() []string {
	var out []string
	for _, op := range AllOps() {
		out = append(out, Names(op)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Supports reports whether an algorithm called name serves op. Auto serves
// every collective.
func Supports(op Op, name string) bool {
	if name == Auto {
		return len(algorithms[op]) > 0
	}
	_, ok := lookup(op, name)
	return ok
}

func lookup(op Op, name string) (algorithm, bool) {
	for _, a := range algorithms[op] {
		if a.name == name {
			return a, true
		}
	}
	return algorithm{}, false
}

// Choose returns the algorithm that name selects for op when a rank's larger
// buffer holds bytes bytes on n ranks: name itself, or for Auto a Latency
// algorithm below AutoThreshold and a Bandwidth one from it on.
func Choose(op Op, name string, bytes, n int) (string, error) {
	if name != Auto {
		if _, ok := lookup(op, name); !ok {
			return "", fmt.Errorf("algorithm %q does not serve %v (it has: %s)", name, op, strings.Join(Names(op), ", "))
		}
		return name, nil
	}
	want := Bandwidth
	if bytes < AutoThreshold {
		want = Latency
	}
	cands := algorithms[op]
	if len(cands) == 0 {
		return "", fmt.Errorf("no algorithm serves %v", op)
	}
	for _, a := range cands {
		if a.kind == want {
			return a.name, nil
		}
	}
	return cands[0].name, nil
}

// Run runs one collective on this rank with the algorithm that name selects
// (see Choose) and returns the name of the algorithm that ran. Every rank of
// the world must call Run with matching arguments.
func (c *Comm) Run(ctx context.Context, name string, a *Args) (string, error) {
	if err := a.validate(c.rank, c.size); err != nil {
		return "", fmt.Errorf("%v rank %d: %w", a.Op, c.rank, err)
	}
	used, err := Choose(a.Op, name, a.Op.Blocks(c.size)*a.Bytes(), c.size)
	if err != nil {
		return "", err
	}
	alg, _ := lookup(a.Op, used)
	c.beginCall(uint8(a.Op), uint8(a.DType))
	if err := alg.run(ctx, c, a); err != nil {
		return used, fmt.Errorf("%v (%s) rank %d: %w", a.Op, used, c.rank, err)
	}
	return used, nil
}
