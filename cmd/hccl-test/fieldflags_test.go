package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/fielderr"
)

// internalFields are the fields of bench.Plan that no flag sets: the
// command or the run fills them in.
var internalFields = map[string]bool{
	"Args": true, "Log": true, "HostedRanks": true, "LaunchedRank": true, "MemLimit": true, "Limits": true,
	"RetrySource": true, "LinkSource": true, "LinkInterSource": true,
	"Own": true, // the backend's own flags set it (backends.FlagDefiner)
}

// TestFieldFlagsCoverPlan: every field of every part of bench.Plan that the
// command line sets has a flag in fieldFlags, the flag is one --help
// lists, and fieldFlags names no field that bench.Plan lacks.
func TestFieldFlagsCoverPlan(t *testing.T) {
	var help bytes.Buffer
	if _, _, err := parseFlags([]string{"--help"}, &help); err != errHelpShown {
		t.Fatalf("--help: %v", err)
	}
	fields := map[fielderr.Field]bool{}
	plan := reflect.TypeOf(bench.Plan{})
	for i := 0; i < plan.NumField(); i++ {
		part := plan.Field(i)
		if !part.Anonymous {
			t.Errorf("Plan.%s is not an embedded part", part.Name)
			continue
		}
		for j := 0; j < part.Type.NumField(); j++ {
			name := part.Type.Field(j).Name
			fields[fielderr.Field(name)] = true
			flag := fieldFlag(fielderr.Field(name))
			ok := flag != ""
			switch {
			case internalFields[name]:
				if ok {
					t.Errorf("%s.%s: no flag sets it, but the table shows it as %s", part.Name, name, flag)
				}
			case !ok:
				t.Errorf("%s.%s: no flag in fieldFlags", part.Name, name)
			case strings.HasPrefix(flag, "--"):
				long := strings.TrimPrefix(strings.FieldsFunc(flag, func(r rune) bool { return r == ' ' || r == '=' })[0], "--")
				long = "--" + strings.ReplaceAll(long, "_", "-")
				if !strings.Contains(help.String(), long+" ") && !strings.Contains(help.String(), long+"=") {
					t.Errorf("%s.%s: %s is not a flag --help lists", part.Name, name, flag)
				}
			}
		}
	}
	for f := range fieldFlags {
		if !fields[f] {
			t.Errorf("fieldFlags names %s, which bench.Plan does not have", f)
		}
	}
	// The fields of the backends' own options are shown as their flags
	// (flagdoc.Sets): sim's, and the plan's NoPayload by sim's flag.
	own := ownFieldFlags()
	for field, want := range map[fielderr.Field]string{"Alpha": "--sim-alpha", "InterAlpha": "--sim-alpha inter=", "NoPayload": "--sim-data=false"} {
		if own[field] != want {
			t.Errorf("%s: shown as %q, want %q", field, own[field], want)
		}
	}
	for field, flag := range own {
		long := strings.FieldsFunc(flag, func(r rune) bool { return r == ' ' || r == '=' })[0]
		if !strings.Contains(help.String(), long+" ") && !strings.Contains(help.String(), long+"=") {
			t.Errorf("%s: %s is not a flag --help lists", field, flag)
		}
	}
}
