package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/world"
)

// backendFlag is a flag (or one value of a flag) that means something on
// some backends only: those whose capabilities it needs. Given on another
// backend it would be taken and do nothing, so it is refused, saying why.
type backendFlag struct {
	flag  string                   // the flag's name, without dashes
	value string                   // "" for any value, else the value that alone is limited (case-insensitive)
	needs func(backends.Caps) bool // what a backend must be for the flag to mean something
	why   string                   // what those backends have that the others do not, after "only --backend X"
}

// Capabilities the backend flags need.
var (
	rendezvous = func(c backends.Caps) bool { return c.Rendezvous }
	hosts      = func(c backends.Caps) bool { return c.Hosts }
)

// backendFlags is every flag that only some backends use. A flag added to
// a backend goes here, with the capability it needs, and both the sweep
// and the scenario command refuse it elsewhere. Environment variables are
// not checked: HCCL's variables (HCCL_CONNECT_TIMEOUT) and launchers'
// (MASTER_ADDR) are set for a whole job, and a job may run several
// backends.
var backendFlags = []backendFlag{
	{flag: "master", needs: rendezvous, why: "has ranks that meet at a rendezvous address"},
	{flag: "bind", needs: rendezvous, why: "has ranks that listen on a network address"},
	{flag: "connect-timeout", needs: rendezvous, why: "has connections to set up"},
	{flag: "topology", value: "auto", needs: hosts, why: "knows the host of every rank"},
}

// refuseForeignFlags returns an error for the first flag given on fs that
// means nothing on w's backend, naming the backends it means something on.
// An unknown backend is left to the plan's validation, which names the
// registered ones.
func refuseForeignFlags(fs *pflag.FlagSet, w world.World) error {
	b, err := w.Resolve()
	if err != nil {
		return nil
	}
	caps := b.Capabilities()
	for _, bf := range backendFlags {
		f := fs.Lookup(bf.flag)
		if f == nil || !f.Changed || bf.needs(caps) {
			continue
		}
		label := "--" + bf.flag
		switch {
		case bf.value == "":
		case !strings.EqualFold(f.Value.String(), bf.value):
			continue
		case f.Value.Type() == "bool":
			label += "=" + bf.value
		default:
			label += " " + bf.value
		}
		on := strings.Join(backends.NamesWith(bf.needs), " or ")
		return fmt.Errorf("%s: only --backend %s %s; it means nothing on --backend %s", label, on, bf.why, b.Name())
	}
	return nil
}
