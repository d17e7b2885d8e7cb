package tcp

import "testing"

// TestPurposeAndCtlTypeString pins the names the generated String methods
// give, the unknown values' included, as the hand-written ones spelled them.
func TestPurposeAndCtlTypeString(t *testing.T) {
	tests := []struct {
		name string
		v    interface{ String() string }
		want string
	}{
		{"rendezvous", PurposeRendezvous, "rendezvous"},
		{"link", PurposeLink, "link"},
		{"purpose 0", Purpose(0), "Purpose(0)"},
		{"purpose 3", Purpose(3), "Purpose(3)"},
		{"vote", ctlVote, "vote"},
		{"verdict", ctlVerdict, "verdict"},
		{"relay", ctlRelay, "relay"},
		{"ctl 0", ctlType(0), "ctlType(0)"},
		{"ctl 255", ctlType(255), "ctlType(255)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}
