package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/fielderr"
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
// backend w runs (refuse); then sets w.Own to the options b makes of its
// own flags, or returns b's refusal of them (read).
func (o ownFlags) apply(b backends.Backend, w *world.World) error {
	if err := o.refuse(b); err != nil {
		return err
	}
	return o.read(b, w)
}

// refuse refuses the first flag given of a backend other than b, naming
// the backend it belongs to (foreignFlag). The sweep refuses them with
// the flags that mean something on some backends only (backendFlags),
// before it reads any value.
func (o ownFlags) refuse(b backends.Backend) error {
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
	return nil
}

// read sets w.Own to the options b makes of its own flags, or returns b's
// refusal of them; w.Own stays nil for a backend without flags.
func (o ownFlags) read(b backends.Backend, w *world.World) error {
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

// applyOwn does what the options own of backend b ask of the harness's
// links l: a run without payload (backends.PayloadOption), and on a
// backend that simulates its links, --link-bw auto becomes the simulated
// link inside a server (backends.Modeled: there is nothing to measure,
// the link is what the model says).
func applyOwn(b backends.Backend, own any, l *bench.Links) {
	if po, ok := own.(backends.PayloadOption); ok && po.WithoutPayload() {
		l.NoPayload = true
	}
	if m, ok := b.(backends.Modeled); ok && b.Capabilities().Simulated && l.LinkSource == bench.LinkAuto {
		l.LinkGBps = m.DefaultLinkGBps()
		l.LinkSource = "auto on " + b.Name() + ": the simulated link inside a server, by default"
	}
}

// ownFieldFlags is how the command line sets each field of a backend's
// own options that a refusal may name (flagdoc.Sets), for fieldFlag: read
// once from the registered backends' own flags.
var ownFieldFlags = sync.OnceValue(func() map[fielderr.Field]string {
	m := map[fielderr.Field]string{}
	_, sections := defineOwnFlags(backends.With(func(backends.Caps) bool { return true }))
	for _, s := range sections {
		s.VisitAll(func(f *pflag.Flag) {
			for field, shown := range flagdoc.FieldsOf(f) {
				m[fielderr.Field(field)] = shown
			}
		})
	}
	return m
})

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
