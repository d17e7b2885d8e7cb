package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
	"time"
)

// flagOf is a stand-in for a command's table of flags.
func flagOf(f Field) string {
	return map[Field]string{"MinBytes": "--minbytes", "MaxBytes": "--maxbytes", "Backend": "--backend"}[f]
}

func TestFieldErrorFormat(t *testing.T) {
	cause := fs.ErrNotExist
	tests := []struct {
		name       string
		err        error
		byField    string // Error and FormatFields with a nil name
		byFlag     string // FormatFields with flagOf
		wantsCause bool
	}{
		{"value and reason", fieldErrorf("MaxBytes", " %d: too large", 3), "MaxBytes 3: too large", "--maxbytes 3: too large", false},
		{"another field in the reason", fieldErrorf("MinBytes", " %d is larger than %s %d", 5, Field("MaxBytes"), 3),
			"MinBytes 5 is larger than MaxBytes 3", "--minbytes 5 is larger than --maxbytes 3", false},
		{"no flag: the field's name", fieldErrorf("Ranks", " %d: need at least 1 rank", 0), "Ranks 0: need at least 1 rank", "Ranks 0: need at least 1 rank", false},
		{"wrapped cause", fieldErrorf("Backend", ": %w", cause), "Backend: " + cause.Error(), "--backend: " + cause.Error(), true},
		{"wrapped in another error", fmt.Errorf("run: %w", fieldErrorf("MaxBytes", " %d: too large", 3)), "run: MaxBytes 3: too large", "run: --maxbytes 3: too large", false},
		{"joined", errors.Join(fieldErrorf("MaxBytes", ": a"), fieldErrorf("MinBytes", ": b")), "MaxBytes: a\nMinBytes: b", "--maxbytes: a\n--minbytes: b", false},
		{"no field error", errors.New("MaxBytes stays"), "MaxBytes stays", "MaxBytes stays", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.byField {
				t.Errorf("Error() = %q, want %q", got, tc.byField)
			}
			if got := FormatFields(tc.err, nil); got != tc.byField {
				t.Errorf("FormatFields(nil) = %q, want %q", got, tc.byField)
			}
			if got := FormatFields(tc.err, flagOf); got != tc.byFlag {
				t.Errorf("FormatFields(flags) = %q, want %q", got, tc.byFlag)
			}
			if got := errors.Is(tc.err, cause); got != tc.wantsCause {
				t.Errorf("errors.Is(cause) = %v, want %v", got, tc.wantsCause)
			}
		})
	}
}

// TestPartsValidateAlone: World and Faults check themselves with nothing
// else set, as a step scenario will use them, and each check names the
// field at fault.
func TestPartsValidateAlone(t *testing.T) {
	world := DefaultPlan().World
	tests := []struct {
		name  string
		check func() error
		field Field // "" for valid
	}{
		{"default world", world.Validate, ""},
		{"world without backend", World{Ranks: 2, Timeout: time.Second, ConnectTimeout: time.Second}.Validate, "Backend"},
		{"world of no ranks", func() error { w := world; w.Ranks = 0; return w.Validate() }, "Ranks"},
		{"world without timeout", func() error { w := world; w.Timeout = 0; return w.Validate() }, "Timeout"},
		{"world without connect timeout", func() error { w := world; w.ConnectTimeout = 0; return w.Validate() }, "ConnectTimeout"},
		{"world with a bad master", func() error { w := world; w.Master = "nohost"; return w.Validate() }, "Master"},
		{"no faults", Faults{}.Validate, ""},
		{"retry past the limit", Faults{Retry: MaxRetry + 1}.Validate, "Retry"},
		{"negative hold", Faults{Retry: 1, RetryHold: -1}.Validate, "RetryHold"},
		{"long interval", Faults{Retry: 1, RetryInterval: MaxRetryPause + 1}.Validate, "RetryInterval"},
		{"default sweep", DefaultPlan().Sweep.Validate, ""},
		{"empty sweep", Sweep{}.Validate, "Ops"},
		{"negative link", Links{LinkGBps: -1}.Validate, "LinkGBps"},
		{"outputs", Outputs{Stats: true}.Validate, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.check()
			var fe *FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.field != "" && !errors.As(err, &fe):
				t.Fatalf("got %v, want a *FieldError for %s", err, tc.field)
			case tc.field != "" && fe.Field != tc.field:
				t.Fatalf("got %v naming %s, want %s", err, fe.Field, tc.field)
			}
		})
	}
}
