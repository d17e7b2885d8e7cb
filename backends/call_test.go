package backends

import (
	"fmt"
	"testing"
)

// names is a CallNamer that spells codes as letters.
type names struct{}

func (names) NameOp(op, dt uint8) string { return fmt.Sprintf("%c(%c)", 'a'+op, 'a'+dt) }
func (names) NameCall(c Call) string {
	return fmt.Sprintf("%c(%c, %d)", 'a'+c.Op, 'a'+c.DType, c.Count)
}

// TestCallNames: a Call without Names prints numbers; with Names, its own
// signature and a peer's codes go through them.
func TestCallNames(t *testing.T) {
	bare := Call{Seq: 3, Op: 2, DType: 11, RedOp: 1, Root: -1, Count: 64}
	named := bare
	named.Names = names{}
	tests := []struct {
		name, got, want string
	}{
		{"bare call", bare.String(), "op 2 (dtype 11) count 64 redop 1 root -1"},
		{"bare op", bare.NameOp(1, 4), "op 1 (dtype 4)"},
		{"named call", named.String(), "c(l, 64)"},
		{"named op", named.NameOp(1, 4), "b(e)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestCallSame: Names is no part of a call's identity; every other field
// is.
func TestCallSame(t *testing.T) {
	c := Call{Seq: 3, Op: 2, DType: 11, Root: -1, Count: 64}
	named := c
	named.Names = names{}
	other := c
	other.Count = 32
	if !c.Same(named) || !named.Same(c) {
		t.Errorf("%v and %v differ only in Names, want Same", c, named)
	}
	if c.Same(other) {
		t.Errorf("%v and %v differ in Count, want not Same", c, other)
	}
}
