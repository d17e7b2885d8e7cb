package coll

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// Func runs one collective on one rank. It may assume that its Args passed
// validation for the Comm's world.
type Func func(ctx context.Context, c *Comm, a *Args) error

// Auto is the algorithm name that lets the registry choose.
const Auto = "auto"

// algorithm is one algorithm of one collective: how it runs and what it
// costs (cost.go).
type algorithm struct {
	op   Op
	name string
	run  Func
	costs
	// scratch, for an algorithm of a variable-size collective whose
	// scratch space depends on the counts, is what it takes on rank of S
	// servers of P ranks, in elements (setScratch); nil where the scratch
	// is at most twice the largest buffer, what Comm.Reserve holds.
	scratch func(c *Counts, rank, S, P int) int
}

// algorithms holds every registered algorithm by collective. It is written
// only by init functions, so it needs no lock.
var algorithms = map[Op][]algorithm{}

// register adds the algorithm name for op, which runs as run and costs as
// c says. Each algorithm's file registers it, with its run and its costs
// beside it. Called from init functions only.
func register(op Op, name string, run Func, c costs) {
	for _, a := range algorithms[op] {
		if a.name == name {
			panic(fmt.Sprintf("coll: %v algorithm %q registered twice", op, name))
		}
	}
	algorithms[op] = append(algorithms[op], algorithm{op: op, name: name, run: run, costs: c})
	slices.SortFunc(algorithms[op], func(a, b algorithm) int { return strings.Compare(a.name, b.name) })
}

// setScratch gives op's algorithm name the scratch function fn (see
// algorithm.scratch). Called from init functions only, after register.
func setScratch(op Op, name string, fn func(c *Counts, rank, S, P int) int) {
	for i := range algorithms[op] {
		if algorithms[op][i].name == name {
			algorithms[op][i].scratch = fn
			return
		}
	}
	panic(fmt.Sprintf("coll: setScratch of unregistered %v algorithm %q", op, name))
}

// VScratch returns the most scratch space, in elements, that any of the
// algorithms names (Auto: every one) of the variable-size collective op
// takes on any rank of a world of S servers of P ranks (S x P = the
// counts' ranks) for counts c: 0 where each one's is at most twice its
// largest buffer, what Comm.Reserve holds. The harness reserves and
// counts the larger of the two.
func VScratch(op Op, names []string, c *Counts, S, P int) int {
	most := 0
	for _, a := range algorithms[op] {
		if a.scratch == nil || !slices.Contains(names, Auto) && !slices.Contains(names, a.name) {
			continue
		}
		for r := range c.Ranks() {
			most = max(most, a.scratch(c, r, S, P))
		}
	}
	return most
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

// Supports reports whether an algorithm called name serves op. Auto and
// Native name every collective (Native only on a backend that has it).
func Supports(op Op, name string) bool {
	if name == Auto || name == Native {
		return len(algorithms[op]) > 0
	}
	_, ok := lookup(op, name)
	return ok
}

// lookup returns the algorithm registered for op under name. The pointer
// is to the registered algorithm itself, which lives as long as the program.
func lookup(op Op, name string) (*algorithm, bool) {
	algs := algorithms[op]
	for i := range algs {
		if algs[i].name == name {
			return &algs[i], true
		}
	}
	return nil, false
}

// Choose returns the algorithm that name selects for op on n ranks with
// blocks of b bytes (Args.Bytes()): name itself, or for Auto the algorithm
// that model m predicts to be fastest (the first by name among equals).
func Choose(op Op, name string, b, n int, m Model) (string, error) {
	if name == Native {
		return Native, nil
	}
	if name != Auto {
		if _, ok := lookup(op, name); !ok {
			return "", fmt.Errorf("algorithm %q does not serve %v (it has: %s)", name, op, strings.Join(Names(op), ", "))
		}
		return name, nil
	}
	cands := algorithms[op]
	if len(cands) == 0 {
		return "", fmt.Errorf("no algorithm serves %v", op)
	}
	if n <= 1 {
		return cands[0].name, nil // nothing moves: any will do
	}
	key := choiceKey{op: op, b: b, n: n, m: m}
	choices.RLock()
	best, ok := choices.m[key]
	choices.RUnlock()
	if ok {
		return best, nil
	}
	// Predicting under the lock lets the other ranks of a call, which
	// all ask the same, wait for one rank's answer rather than each
	// work it out.
	choices.Lock()
	defer choices.Unlock()
	if best, ok := choices.m[key]; ok {
		return best, nil
	}
	best, bestCost := cands[0].name, math.Inf(1)
	for _, a := range cands {
		if !a.costed() {
			continue
		}
		if c := a.predict(n, float64(b), m); c < bestCost {
			best, bestCost = a.name, c
		}
	}
	if len(choices.m) >= maxChoices {
		clear(choices.m)
	}
	choices.m[key] = best
	return best, nil
}

// choices remembers auto's picks: every rank asks before every call, and
// some costs follow every rank through the steps (dbtree's), which takes
// milliseconds on a thousand ranks. A pick depends on nothing but its key.
var choices = struct {
	sync.RWMutex
	m map[choiceKey]string
}{m: map[choiceKey]string{}}

// choiceKey is what auto's pick depends on.
type choiceKey struct {
	op   Op
	b, n int
	m    Model
}

// pickKey is what a Comm's latest pick was for (Comm.lastPick): its size
// is the Comm's, and its model the one the pick was made with.
type pickKey struct {
	op   Op
	name string
	b    int
}

// maxChoices bounds the picks remembered; a sweep asks for a few dozen.
const maxChoices = 4096

// Run runs one collective on this rank with the algorithm that name selects
// (see Choose, with the Comm's model) and returns the name of the algorithm
// that ran. Every rank of the world must call Run with matching arguments.
// With a retry policy set (SetRetry), a call that fails on a transport
// error is run again.
func (c *Comm) Run(ctx context.Context, name string, a *Args) (string, error) {
	if c.retry.Max > 0 && c.size > 1 {
		return c.runRetry(ctx, name, a)
	}
	return c.runOnce(ctx, name, a)
}

// choose is Choose with the Comm's size and model, remembering the latest
// pick, auto's or a named algorithm's: a row asks the same every call.
func (c *Comm) choose(op Op, name string, b int) (string, error) {
	key := pickKey{op: op, name: name, b: b}
	if c.lastPick.algo != "" && c.lastPick.key == key {
		return c.lastPick.algo, nil
	}
	used, err := Choose(op, name, b, c.size, c.model)
	if err == nil {
		c.lastPick.key, c.lastPick.algo = key, used
	}
	return used, err
}

// runOnce is one attempt at a call.
func (c *Comm) runOnce(ctx context.Context, name string, a *Args) (string, error) {
	if err := a.validate(c.rank, c.size); err != nil {
		return "", fmt.Errorf("%v rank %d: %w", a.Op, c.rank, err)
	}
	used, err := c.choose(a.Op, name, a.Bytes())
	if err != nil {
		return "", err
	}
	c.beginCall(signature(a))
	run, alg := runNative, &nativeAlgo
	if used != Native {
		if alg = c.lastAlg; alg == nil || alg.op != a.Op || alg.name != used {
			alg, _ = lookup(a.Op, used)
			c.lastAlg = alg
		}
		run = alg.run
	}
	c.live.begin(c.calls, a, alg)
	defer c.live.end()
	var done bool
	if used != Native {
		done, err = c.runSymmetric(ctx, alg, a)
		if !done && err == nil {
			done, err = c.timeWorld(ctx, alg, a)
		}
		if !done && err == nil {
			done, err = c.replayWorld(ctx, alg, a)
		}
	}
	switch {
	case done || err != nil:
	case a.RedOp == dtype.MulSum && a.Op.Reduces() && used != Native:
		err = run(ctx, c, c.preMultiplied(a))
	default:
		err = run(ctx, c, a)
	}
	if err == nil && c.clock != nil {
		// Every request of the call is done: the rank can stop here
		// without leaving a peer waiting on it.
		err = backends.CheckClock(c.t)
	}
	if err != nil {
		return used, &CallError{Rank: c.rank, Seq: c.calls, Call: signature(a).String(), Algo: used, Err: err}
	}
	return used, nil
}
