package fielderr

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// flagOf is a stand-in for a command's table of flags.
func flagOf(f Field) string {
	return map[Field]string{"MinBytes": "--minbytes", "MaxBytes": "--maxbytes", "Backend": "--backend"}[f]
}

// shortOf is a stand-in for a command's table of short flags.
func shortOf(f Field) string { return map[Field]string{"MaxBytes": "-e"}[f] }

func TestFieldErrorFormat(t *testing.T) {
	cause := fs.ErrNotExist
	tests := []struct {
		name       string
		err        error
		byField    string // Error and FormatFields with a nil name
		byFlag     string // FormatFields with flagOf
		wantsCause bool
	}{
		{"value and reason", FieldErrorf("MaxBytes", " %d: too large", 3), "MaxBytes 3: too large", "--maxbytes 3: too large", false},
		{"another field in the reason", FieldErrorf("MinBytes", " %d is larger than %s %d", 5, Field("MaxBytes"), 3),
			"MinBytes 5 is larger than MaxBytes 3", "--minbytes 5 is larger than --maxbytes 3", false},
		{"no flag: the field's name", FieldErrorf("Ranks", " %d: need at least 1 rank", 0), "Ranks 0: need at least 1 rank", "Ranks 0: need at least 1 rank", false},
		{"wrapped cause", FieldErrorf("Backend", ": %w", cause), "Backend: " + cause.Error(), "--backend: " + cause.Error(), true},
		{"wrapped in another error", fmt.Errorf("run: %w", FieldErrorf("MaxBytes", " %d: too large", 3)), "run: MaxBytes 3: too large", "run: --maxbytes 3: too large", false},
		{"joined", errors.Join(FieldErrorf("MaxBytes", ": a"), FieldErrorf("MinBytes", ": b")), "MaxBytes: a\nMinBytes: b", "--maxbytes: a\n--minbytes: b", false},
		{"a field error in a field error", FieldErrorf("Backend", ": %w", FieldErrorf("MaxBytes", " %d: too large", 3)),
			"Backend: MaxBytes 3: too large", "--backend: --maxbytes 3: too large", false},
		{"a short form in the reason", FieldErrorf("Ranks", " %d: use a smaller %s or %s", 9, ShortField("MaxBytes"), ShortField("MinBytes")),
			"Ranks 9: use a smaller MaxBytes or MinBytes", "Ranks 9: use a smaller -e or --minbytes", false},
		{"no field error", errors.New("MaxBytes stays"), "MaxBytes stays", "MaxBytes stays", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.byField {
				t.Errorf("Error() = %q, want %q", got, tc.byField)
			}
			if got := FormatFields(tc.err, Names{}); got != tc.byField {
				t.Errorf("FormatFields(nil) = %q, want %q", got, tc.byField)
			}
			if got := FormatFields(tc.err, Names{Long: flagOf, Short: shortOf}); got != tc.byFlag {
				t.Errorf("FormatFields(flags) = %q, want %q", got, tc.byFlag)
			}
			if got := errors.Is(tc.err, cause); got != tc.wantsCause {
				t.Errorf("errors.Is(cause) = %v, want %v", got, tc.wantsCause)
			}
		})
	}
}
