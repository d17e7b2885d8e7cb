package backends

import "testing"

// TestOutcomeString pins the names the generated String gives, the unknown
// value's included, as the hand-written one spelled them.
func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{
		Succeeded: "succeeded", Transient: "transient failure", Fatal: "fatal failure",
		3: "Outcome(3)", 255: "Outcome(255)",
	} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", uint8(o), got, want)
		}
	}
}
