package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/listarg"
)

// Several algorithms in one run. --algo auto,ring,rd measures every row
// with each of the algorithms in turn, one right after the other, so that
// they are compared side by side: on a shared machine, runs minutes apart
// differ by more than the algorithms do. Each record names the algorithm
// asked for (results.Record.AlgoRequested) as well as the one that ran.

// algoList splits an --algo value at its commas.
func algoList(s string) []string {
	list := strings.Split(s, ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	return list
}

// AlgosFor returns the algorithms the rows of op are measured with, in
// the order they run: its entry in OpAlgos, else those of Algo.
func (p *Plan) AlgosFor(op coll.Op) []string {
	if a, ok := p.OpAlgos[op]; ok {
		return []string{a}
	}
	return algoList(p.Algo)
}

// Compares reports whether the rows are measured with more than one
// algorithm each.
func (p *Plan) Compares() bool {
	for _, op := range p.Ops {
		if len(p.AlgosFor(op)) > 1 {
			return true
		}
	}
	return false
}

// asks reports whether some collective of the plan is measured with algo.
func (p *Plan) asks(algo string) bool {
	for _, op := range p.Ops {
		if slices.Contains(p.AlgosFor(op), algo) {
			return true
		}
	}
	return false
}

// AlgoString describes the algorithms asked for, for the header: Algo, and
// any per-collective choices.
func (p *Plan) AlgoString() string {
	s := p.Algo
	for _, op := range p.Ops {
		if a, ok := p.OpAlgos[op]; ok {
			s += fmt.Sprintf(" %v=%s", op, a)
		}
	}
	return s
}

// validateAlgos checks that every algorithm asked for serves every
// collective it is asked for, once.
func (p *Plan) validateAlgos() error {
	same := func(a string) (string, error) { return a, nil }
	// The list's errors are the text after its name: the field heads it.
	if _, err := listarg.Parse("", p.Algo, ",", same); err != nil {
		return fielderr.FieldErrorf("Algo", "%w", err)
	}
	if p.asks(coll.Native) && !p.Caps().Native {
		return fielderr.FieldErrorf("Algo", " native: runs MPI's own collectives, so it needs %s mpi (a build with -tags mpi, under mpirun)", fielderr.Field("Backend"))
	}
	if p.asks(coll.Native) {
		if err := p.validateNative(p.Caps()); err != nil {
			return err
		}
	}
	for _, op := range p.Ops {
		for _, algo := range p.AlgosFor(op) {
			if !coll.Supports(op, algo) {
				return fielderr.FieldErrorf("Algo", " %q: does not serve %v (it has: %s)", algo, op, strings.Join(coll.Names(op), ", "))
			}
		}
	}
	return nil
}

// validateNative checks that the backend's own collectives serve every
// data type, and every reduction of a collective that reduces, that the
// plan sweeps (MPI's have no fp8 and no mulsum).
func (p *Plan) validateNative(c backends.Caps) error {
	for _, dt := range p.DTypes {
		if c.NativeDTypes != nil && !slices.Contains(c.NativeDTypes, dt) {
			return fielderr.FieldErrorf("Algo", " native: %s's own collectives have no %v (they have: %s); use another %s or another %s",
				p.Backend, dt, joinNames(c.NativeDTypes), fielderr.Field("DTypes"), fielderr.Field("Algo"))
		}
	}
	if !slices.ContainsFunc(p.Ops, coll.Op.Reduces) {
		return nil
	}
	for _, op := range p.RedOps {
		if c.NativeRedOps != nil && !slices.Contains(c.NativeRedOps, op) {
			return fielderr.FieldErrorf("Algo", " native: %s's own collectives have no %v reduction (they have: %s); use another %s or another %s",
				p.Backend, op, joinNames(c.NativeRedOps), fielderr.Field("RedOps"), fielderr.Field("Algo"))
		}
	}
	return nil
}

// joinNames joins the names of vs with spaces.
func joinNames[T fmt.Stringer](vs []T) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.String()
	}
	return strings.Join(names, " ")
}
