package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOneLine(t *testing.T) {
	_, openErr := os.Open("/nonexistent/a\nb")
	long := errors.New(strings.Repeat("é", 600) + "the cause")
	tests := []struct {
		name string
		err  error
		want string // the whole line, or with "…" pieces in order
	}{
		{"plain", errors.New("boom"), "boom"},
		{"joined", errors.Join(errors.New("a"), errors.New("b")), "a; b"},
		{"path with a newline", fmt.Errorf("--csv: %w", openErr), `--csv: open "/nonexistent/a\nb": no such file or directory`},
		{"control characters", errors.New("x\x1b[31my\rz\x00"), `x\x1b[31my\rz\x00`},
		{"invalid UTF-8", errors.New("a\xffb"), `a\xffb`},
		{"long", long, "ééé… [... …bytes cut ...] é…the cause"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := oneLine(tc.err)
			if strings.ContainsAny(got, "\n\r") || len(got) > maxErrorLine || !utf8.ValidString(got) {
				t.Fatalf("%q: not one valid line of at most %d bytes (%d)", got, maxErrorLine, len(got))
			}
			if !strings.Contains(tc.want, "…") {
				if got != tc.want {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
				return
			}
			rest := got
			for _, piece := range strings.Split(tc.want, "…") {
				i := strings.Index(rest, piece)
				if i < 0 {
					t.Fatalf("%q lacks %q in order", got, piece)
				}
				rest = rest[i+len(piece):]
			}
		})
	}
}
