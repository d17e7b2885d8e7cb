package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/flagdoc"
	"github.com/hccl-test/hccl-test/world"
)

// ownFlags are the flags that backends define themselves
// (backends.FlagDefiner), in the section of the command for the backend:
// each such backend, its flags and the function that makes its options of
// them.
type ownFlags []ownFlagsOf

// ownFlagsOf are one backend's own flags.
type ownFlagsOf struct {
	b    backends.Backend
	fs   *pflag.FlagSet
	read func() (any, error)
}

// defineOwnFlags has each of bs that is a backends.FlagDefiner define its
// flags in a section of its own, headed "Name (--backend name)" as the
// sim's is, in the order of bs; it returns the sections for --help and
// parsing (none when no backend defines flags).
func defineOwnFlags(bs []backends.Backend) (ownFlags, []*flagSection) {
	var (
		o        ownFlags
		sections []*flagSection
	)
	for _, b := range bs {
		d, ok := b.(backends.FlagDefiner)
		if !ok {
			continue
		}
		name := b.Name()
		s := newFlagSection(strings.ToUpper(name[:1]) + name[1:] + " (--backend " + name + ")")
		read := d.DefineFlags(s.FlagSet)
		o = append(o, ownFlagsOf{b: b, fs: s.FlagSet, read: read})
		sections = append(sections, s)
	}
	return o, sections
}

// apply refuses the first flag given of a backend other than b, the
// backend w runs, naming the backend it belongs to (foreignFlag); then sets w.Own to
// the options b makes of its own flags, or returns b's refusal of them.
func (o ownFlags) apply(b backends.Backend, w *world.World) error {
	for _, of := range o {
		if backends.Same(of.b, b) {
			continue
		}
		var err error
		of.fs.VisitAll(func(f *pflag.Flag) {
			if err == nil && f.Changed {
				err = foreignFlag(f, of.b, b)
			}
		})
		if err != nil {
			return err
		}
	}
	for _, of := range o {
		if !backends.Same(of.b, b) {
			continue
		}
		own, err := of.read()
		if err != nil {
			return err
		}
		w.Own = own
	}
	return nil
}

// foreignFlag is the refusal of f, a flag of backend owner's own given on
// backend b: "only --backend owner" and what the owner has that b lacks
// (flagdoc.Only), or "takes it" when the owner says nothing. A flag whose
// owner refuses only one value elsewhere (--sim-data=false) is refused
// with that value alone; nil for another value.
func foreignFlag(f *pflag.Flag, owner, b backends.Backend) error {
	why, value, ok := flagdoc.OnlyOf(f)
	if !ok {
		why = "takes it"
	}
	label := "--" + f.Name
	switch {
	case value == "":
	case !strings.EqualFold(f.Value.String(), value):
		return nil
	case f.Value.Type() == "bool":
		label += "=" + value
	default:
		label += " " + value
	}
	return fmt.Errorf("%s: only --backend %s %s; it means nothing on --backend %s", label, owner.Name(), why, b.Name())
}
