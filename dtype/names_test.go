package dtype

import (
	"strings"
	"testing"
)

// TestNamesRoundTrip checks that every type's and operator's String is a
// name that --datatype and --redop accept (Parse, ParseOp) for the same
// value, in any case.
func TestNamesRoundTrip(t *testing.T) {
	for _, d := range All() {
		for _, s := range []string{d.String(), strings.ToUpper(d.String())} {
			if got, err := Parse(s); err != nil || got != d {
				t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, d)
			}
		}
	}
	for _, o := range AllOps() {
		for _, s := range []string{o.String(), strings.ToUpper(o.String())} {
			if got, err := ParseOp(s); err != nil || got != o {
				t.Errorf("ParseOp(%q) = %v, %v; want %v", s, got, err, o)
			}
		}
	}
}
