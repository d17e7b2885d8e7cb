package flagdoc

import (
	"maps"
	"testing"

	"github.com/spf13/pflag"
)

// TestAnnotations sets each annotation on a flag set and reads it back
// from the flag, and reads nothing from a flag that has none.
func TestAnnotations(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.Duration("hold", 0, "")
	fs.Bool("data", true, "")
	fs.String("alpha", "", "")
	fs.Int("plain", 0, "")
	Arg(fs, "hold", "DURATION")
	Only(fs, "hold", "", "holds its start")
	Only(fs, "data", "false", "simulates links")
	Sets(fs, "alpha", "Alpha", "")
	Sets(fs, "alpha", "InterAlpha", "--alpha inter=")

	tests := []struct {
		flag       string
		arg        string
		argOK      bool
		why, value string
		onlyOK     bool
		fields     map[string]string
	}{
		{flag: "hold", arg: "DURATION", argOK: true, why: "holds its start", onlyOK: true, fields: map[string]string{}},
		{flag: "data", why: "simulates links", value: "false", onlyOK: true, fields: map[string]string{}},
		{flag: "alpha", fields: map[string]string{"Alpha": "--alpha", "InterAlpha": "--alpha inter="}},
		{flag: "plain", fields: map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.flag, func(t *testing.T) {
			f := fs.Lookup(tc.flag)
			if arg, ok := ArgOf(f); arg != tc.arg || ok != tc.argOK {
				t.Errorf("ArgOf = %q, %v; want %q, %v", arg, ok, tc.arg, tc.argOK)
			}
			if why, value, ok := OnlyOf(f); why != tc.why || value != tc.value || ok != tc.onlyOK {
				t.Errorf("OnlyOf = %q, %q, %v; want %q, %q, %v", why, value, ok, tc.why, tc.value, tc.onlyOK)
			}
			if got := FieldsOf(f); !maps.Equal(got, tc.fields) {
				t.Errorf("FieldsOf = %v, want %v", got, tc.fields)
			}
		})
	}
}

// TestUnknownFlagPanics: annotating a flag the set lacks is a programming
// error, caught by every --help, so each setter panics rather than
// dropping it.
func TestUnknownFlagPanics(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for name, f := range map[string]func(){
		"Arg":  func() { Arg(fs, "missing", "X") },
		"Only": func() { Only(fs, "missing", "", "why") },
		"Sets": func() { Sets(fs, "missing", "F", "") },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s on a missing flag did not panic", name)
				}
			}()
			f()
		})
	}
}
