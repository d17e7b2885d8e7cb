package boundedfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenStream checks that OpenStream reads a regular file past the
// limit to its end, holds a device to the limit, and that SetMaxLine
// refuses a line longer than its most, naming the line, in every kind of
// file.
func TestOpenStream(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const limit = 1024
	big := strings.Repeat("0123456789abcde\n", 4*limit/16) // 4 KiB of short lines
	for _, tc := range []struct {
		name, path string
		maxLine    int64
		want       string // read in full; "" when an error is wanted
		errText    string
		line       int // the LineError's line; 0 when the error is not one
	}{
		{name: "regular file past the limit", path: write("big", big), want: big},
		{name: "lines at the most", path: write("short", "abcd\nefgh\n"), maxLine: 4, want: "abcd\nefgh\n"},
		{name: "a line past the most", path: write("long", "abcd\nefghi\nj\n"), maxLine: 4,
			errText: "long:2: a line longer than 4 bytes", line: 2},
		{name: "no newline at all", path: write("one", strings.Repeat("x", 3*limit)), maxLine: limit,
			errText: "one:1: a line longer than 1 KiB", line: 1},
		{name: "/dev/zero, no newline", path: "/dev/zero", maxLine: limit / 2, errText: "/dev/zero:1: a line longer than 512 bytes", line: 1},
		{name: "/dev/zero past the limit", path: "/dev/zero", errText: "/dev/zero: more than the limit of 1 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := OpenStream(tc.path, limit)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.SetMaxLine(tc.maxLine)
			got, err := io.ReadAll(f)
			if tc.want != "" {
				if err != nil || string(got) != tc.want {
					t.Fatalf("read %d bytes, %v; want %d bytes", len(got), err, len(tc.want))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errText) {
				t.Fatalf("read %d bytes, error %v; want one containing %q", len(got), err, tc.errText)
			}
			var le *LineError
			if errors.As(err, &le) != (tc.line > 0) || le != nil && le.Line != tc.line {
				t.Errorf("error %#v: want a LineError on line %d", err, tc.line)
			}
			if tc.maxLine > 0 && bytes.Count(got, []byte("\n")) == 0 && int64(len(got)) > tc.maxLine {
				t.Errorf("returned %d bytes of a line of at most %d", len(got), tc.maxLine)
			}
			if !errors.Is(f.Err(), err) {
				t.Errorf("Err() = %v, want the error Read returned", f.Err())
			}
			if n, again := f.Read(make([]byte, 8)); n != 0 || again == nil {
				t.Errorf("read again: %d bytes, %v; want the error again", n, again)
			}
		})
	}
}
