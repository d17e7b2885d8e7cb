package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
)

// backendFlag is a flag (or one value of a flag) that means something on
// some backends only. Given on another backend it would be taken and do
// nothing, so it is refused, saying why.
type backendFlag struct {
	flag  string   // the flag's name, without dashes
	value string   // "" for any value, else the value that alone is limited (case-insensitive)
	on    []string // the backends it means something on
	why   string   // what those backends have that the others do not, after "only --backend X"
}

// backendFlags is every flag that one backend alone uses. A flag added to
// a backend goes here, and both the sweep and the scenario command refuse
// it elsewhere. Environment variables are not checked: HCCL's variables
// (HCCL_CONNECT_TIMEOUT) and launchers' (MASTER_ADDR) are set for a whole
// job, and a job may run several backends.
var backendFlags = []backendFlag{
	{flag: "master", on: []string{"tcp"}, why: "has ranks that meet at a rendezvous address"},
	{flag: "bind", on: []string{"tcp"}, why: "has ranks that listen on a network address"},
	{flag: "connect-timeout", on: []string{"tcp"}, why: "has connections to set up"},
	{flag: "topology", value: "auto", on: []string{"tcp"}, why: "knows the host of every rank"},
	{flag: "sim-alpha", on: []string{"sim"}, why: "simulates links"},
	{flag: "sim-gap", on: []string{"sim"}, why: "simulates links"},
	{flag: "sim-pull", on: []string{"sim"}, why: "simulates links"},
	{flag: "sim-reduce", on: []string{"sim"}, why: "simulates reductions"},
	{flag: "sim-copy", on: []string{"sim"}, why: "simulates copies"},
	{flag: "sim-data", value: "false", on: []string{"sim"}, why: "can run without payload"},
}

// refuseForeignFlags returns an error for the first flag given on fs that
// means nothing on backend. An unknown backend is left to the plan's
// validation, which names the registered ones.
func refuseForeignFlags(fs *pflag.FlagSet, backend string) error {
	if _, err := backends.Lookup(backend); err != nil {
		return nil
	}
	for _, bf := range backendFlags {
		f := fs.Lookup(bf.flag)
		if f == nil || !f.Changed || slices.Contains(bf.on, backend) {
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
		return fmt.Errorf("%s: only --backend %s %s; it means nothing on --backend %s", label, strings.Join(bf.on, " or "), bf.why, backend)
	}
	return nil
}
