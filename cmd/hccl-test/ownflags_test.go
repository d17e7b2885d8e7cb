package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/flagdoc"
	"github.com/hccl-test/hccl-test/world"
)

// holdBackend is a backend with one flag of its own (--hold), for the
// tests of ownflags.go; it is never registered, so that the command's
// help and lists stay those of the real backends.
type holdBackend struct{ name string }

func (h holdBackend) Name() string              { return h.name }
func (holdBackend) Capabilities() backends.Caps { return backends.Caps{InProcess: true} }
func (holdBackend) Run(context.Context, backends.Config, backends.RankFunc) error {
	return errors.New("not run")
}

// DefineFlags implements backends.FlagDefiner: --hold DURATION, at most a
// minute.
func (holdBackend) DefineFlags(fs *pflag.FlagSet) func() (any, error) {
	d := fs.Duration("hold", 0, "wait this long before the ranks start")
	flagdoc.Arg(fs, "hold", "DURATION")
	fs.Bool("hold-data", true, "false holds no data")
	flagdoc.Arg(fs, "hold-data", "=false")
	flagdoc.Only(fs, "hold-data", "false", "can hold no data")
	return func() (any, error) {
		if *d < 0 || *d > time.Minute {
			return nil, fmt.Errorf("--hold %v: want 0 to 1m", *d)
		}
		return *d, nil
	}
}

// TestOwnFlags: a backend's own flags are defined in a section of their
// own with their help, parsed with the command's, set the world's Own on
// that backend, are refused by it when bad, and are refused on any other
// backend naming the one that takes them.
func TestOwnFlags(t *testing.T) {
	hold, other := holdBackend{"hold"}, holdBackend{"sim"}
	var plain backends.Backend = noFlags{}
	tests := []struct {
		name   string
		args   []string
		runs   backends.Backend
		want   any
		errSub string
	}{
		{"given", []string{"--hold", "2s"}, hold, 2 * time.Second, ""},
		{"default", nil, hold, time.Duration(0), ""},
		{"refused by the backend", []string{"--hold", "2m"}, hold, nil, "--hold 2m0s: want 0 to 1m"},
		{"on another backend", []string{"--hold", "2s"}, plain, nil, "--hold: only --backend hold takes it; it means nothing on --backend plain"},
		{"another's not given", nil, plain, nil, ""},
		{"limited value on another backend", []string{"--hold-data=false"}, plain, nil, "--hold-data=false: only --backend hold can hold no data; it means nothing on --backend plain"},
		{"other value on another backend", []string{"--hold-data=true"}, plain, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			own, sections := defineOwnFlags([]backends.Backend{plain, hold, other})
			if len(sections) != 2 || sections[0].title != "Hold (--backend hold)" || sections[1].title != "Sim (--backend sim)" {
				t.Fatalf("sections %v, want hold's and sim's", sections)
			}
			fs := joinSections("test", sections...)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			var w world.World
			err := own.apply(tc.runs, &w)
			switch {
			case tc.errSub != "":
				if err == nil || err.Error() != tc.errSub {
					t.Fatalf("got %v, want %q", err, tc.errSub)
				}
			case err != nil:
				t.Fatal(err)
			case w.Own != tc.want:
				t.Fatalf("Own %#v, want %#v", w.Own, tc.want)
			}
		})
	}
	_, sections := defineOwnFlags([]backends.Backend{hold})
	var help bytes.Buffer
	writeFlagHelp(&help, 80, joinSections("test", sections...), sections...)
	if !strings.Contains(help.String(), "Hold (--backend hold)") || !strings.Contains(help.String(), "wait this long before the ranks start") {
		t.Errorf("help lacks the backend's section or its flag's help:\n%s", help.String())
	}
	// What a backend's own flag takes is shown as the command's own flags
	// show it (flagdoc.Arg), not as pflag's type.
	for _, want := range []string{"      --hold DURATION ", "      --hold-data=false "} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
}

// noFlags is a backend without flags of its own.
type noFlags struct{}

func (noFlags) Name() string                { return "plain" }
func (noFlags) Capabilities() backends.Caps { return backends.Caps{} }
func (noFlags) Run(context.Context, backends.Config, backends.RankFunc) error {
	return errors.New("not run")
}
