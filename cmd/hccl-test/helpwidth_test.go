package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// helpScreens are the command lines of every help screen: the sweep's,
// each command's (from the table commands), and help's own forms.
func helpScreens() [][]string {
	screens := [][]string{{"--help"}, {"-h"}, {"help"}}
	for _, c := range commands {
		screens = append(screens, []string{c.name, "--help"}, []string{"help", c.name})
	}
	return screens
}

// TestHelpScreensFitWidth: every help screen, the commands' too, fits
// helpWidth columns when stdout is not a terminal, and the width of a
// terminal it wraps to, narrow or wide: no line is wider, and on a wide
// terminal the flags' text uses the room (some line is wider than
// helpWidth).
func TestHelpScreensFitWidth(t *testing.T) {
	defer func(w int) { screenWidth = w }(screenWidth)
	for _, width := range []int{helpWidth, 60, maxHelpWidth} {
		screenWidth = width
		widest := 0
		for _, args := range helpScreens() {
			var stdout, stderr bytes.Buffer
			if code := run(args, &stdout, &stderr); code != exitOK || stderr.Len() != 0 || stdout.Len() == 0 {
				t.Fatalf("%q: exit %d, stderr %q, %d bytes of help", args, code, stderr.String(), stdout.Len())
			}
			for i, l := range strings.Split(stdout.String(), "\n") {
				n := utf8.RuneCountInString(l)
				widest = max(widest, n)
				if n > width {
					t.Errorf("width %d: %q: line %d has %d columns: %q", width, args, i+1, n, l)
				}
			}
		}
		if width > helpWidth && widest <= helpWidth {
			t.Errorf("width %d: no line wider than %d: help does not wrap to the terminal", width, helpWidth)
		}
	}
}

// TestHelpCommand: `hccl-test help CMD` is CMD's --help, `hccl-test help`
// the sweep's; a command that is none is refused with one line naming
// the commands.
func TestHelpCommand(t *testing.T) {
	help := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	main, _, _ := help("--help")
	if got, _, code := help("help"); code != exitOK || got != main {
		t.Errorf("help: exit %d, not --help's screen:\n%s", code, got)
	}
	for _, c := range commands {
		want, _, _ := help(c.name, "--help")
		if got, _, code := help("help", c.name); code != exitOK || got != want || !strings.HasPrefix(got, "Usage: hccl-test "+c.name) {
			t.Errorf("help %s: exit %d, not %s --help's screen:\n%s", c.name, code, c.name, got)
		}
		if flat := strings.Join(strings.Fields(main), " "); !strings.Contains(flat, strings.TrimSpace(c.name+" "+c.args)+" "+c.summary) {
			t.Errorf("--help does not list %s %s with %q", c.name, c.args, c.summary)
		}
	}
	for _, args := range [][]string{{"help", "nosuch"}, {"help", "compare", "plot"}, {"help", "-x"}} {
		out, errs, code := help(args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "hccl-test help: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errs)
		}
	}
	if _, errs, _ := help("help", "nosuch"); !strings.Contains(errs, "compare, plot, convert") {
		t.Errorf("help nosuch: %q does not name the commands", errs)
	}
}

// TestWriteText: prose is joined and wrapped, headings and indented lines
// kept, and a two-column list re-wrapped with its continuation lines.
func TestWriteText(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
		width, col       int
	}{
		{"prose", "one two three\nfour five", "one two\nthree four\nfive\n", 11, 4},
		{"heading", "Names:\n  a b c", "Names:\n  a b c\n", 11, 4},
		{"example kept", "  hccl-test -b 8 -e 1M", "  hccl-test -b 8 -e 1M\n", 30, 4},
		{"list", "List:\n  AB  one two three\n      four\n  C  five", "List:\n  AB  one two\n      three four\n  C   five\n", 16, 6},
		{"list left too wide", "  ABCDEFGH  one two", "  ABCDEFGH\n      one two\n", 16, 6},
		{"paragraphs", "a b\n\nc d", "a b\n\nc d\n", 11, 4},
	} {
		var b strings.Builder
		writeText(&b, tc.width, tc.col, tc.text)
		if b.String() != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, b.String(), tc.want)
		}
	}
}

// TestWrapExample: a comment wraps as comments, a command with shell
// continuations, each line within the width.
func TestWrapExample(t *testing.T) {
	for _, tc := range []struct {
		line  string
		width int
		want  []string
	}{
		{"  # one two three", 80, []string{"  # one two three"}},
		{"  # one two three", 12, []string{"  # one two", "  # three"}},
		{"  hccl-test -b 8 -e 1M", 16, []string{"  hccl-test -b \\", "      8 -e 1M"}},
	} {
		got := wrapExample(tc.line, tc.width)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%q at %d: got %q, want %q", tc.line, tc.width, got, tc.want)
		}
	}
}

// TestTerminalWidth: help wraps to 80 columns on what is not a terminal:
// nothing, a pipe, a file.
func TestTerminalWidth(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.CreateTemp(t.TempDir(), "help")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		name string
		f    *os.File
	}{{"none", nil}, {"pipe", w}, {"file", f}} {
		if got := terminalWidth(tc.f); got != helpWidth {
			t.Errorf("%s: width %d, want %d", tc.name, got, helpWidth)
		}
	}
}

// TestTerminalWidthOfATerminal: on a terminal (a pseudo-terminal here,
// given a size) help wraps to its columns, within 40 and 120.
func TestTerminalWidthOfATerminal(t *testing.T) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer m.Close()
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("naming the pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	defer s.Close()
	for _, tc := range []struct{ cols, want int }{{100, 100}, {80, 80}, {30, minHelpWidth}, {200, maxHelpWidth}} {
		if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: uint16(tc.cols)}); err != nil {
			t.Fatal(err)
		}
		if got := terminalWidth(s); got != tc.want {
			t.Errorf("a terminal of %d columns: width %d, want %d", tc.cols, got, tc.want)
		}
	}
}
