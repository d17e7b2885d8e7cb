package main

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxErrorLine is the most bytes of an error's text that its line on stderr
// carries. Errors name ranges of ranks rather than every rank, but the cap
// holds whatever an error says.
const maxErrorLine = 1000

// oneLine returns err's text as one line of at most maxErrorLine bytes, as
// every error the command prints is: the plan's fields it names shown as
// their flags (flagText), the lines of joined errors joined with
// "; ", a path with a newline or other control character (in an error of
// the operating system's) quoted, any other control character or invalid
// UTF-8 escaped, and a text past the limit cut in the middle, keeping its
// start (what failed) and its end (the cause).
func oneLine(err error) string {
	s := flagText(err)
	for _, p := range oddPaths(err) {
		s = strings.ReplaceAll(s, p, strconv.Quote(p))
	}
	return capLine(escapeControl(strings.ReplaceAll(s, "\n", "; ")), maxErrorLine)
}

// oddPaths returns the paths in err's tree of *fs.PathError and
// *os.LinkError that would not print as one plain line.
func oddPaths(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case nil:
			return
		case *fs.PathError:
			out = append(out, x.Path)
		case *os.LinkError:
			out = append(out, x.Old, x.New)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	odd := out[:0]
	for _, p := range out {
		if p != "" && escapeControl(p) != p {
			odd = append(odd, p)
		}
	}
	return odd
}

// quotePath returns a path as a message shows it: as it is, or quoted when
// it would not print as one plain line (a newline, another control
// character, invalid UTF-8).
func quotePath(p string) string {
	if escapeControl(p) != p {
		return strconv.Quote(p)
	}
	return p
}

// escapeControl writes control characters and invalid UTF-8 as Go escapes.
func escapeControl(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// capLine cuts s to at most max bytes (max well over 100), keeping about
// two thirds from its start and the rest from its end, at rune boundaries,
// and saying how much was left out.
func capLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := fmt.Sprintf(" [... %d bytes cut ...] ", len(s)) // at least as long as the real count
	keep := max - len(marker)
	head, tail := keep*2/3, keep-keep*2/3
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[:head] + fmt.Sprintf(" [... %d bytes cut ...] ", start-head) + s[start:]
}
