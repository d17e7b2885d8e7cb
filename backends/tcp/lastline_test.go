package tcp

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

func TestLastLine(t *testing.T) {
	var out bytes.Buffer
	l := &lastLine{w: &out}
	for _, chunk := range []string{"first line\nsec", "ond", " line\n\n", "hccl-test: the error\n", "partial"} {
		if _, err := l.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	l.finish(false)
	if got := l.String(); got != "the error" {
		t.Errorf("last line %q, want %q", got, "the error")
	}
	if out.String() != "first line\nsecond line\n\nhccl-test: the error\npartial" {
		t.Errorf("passed on %q", out.String())
	}
}

// TestLastLineFailedChild: a child that fails keeps its error line (the
// parent's one-line error repeats it) and passes on everything else; one
// that goes on passes a held line on after holdLine.
func TestLastLineFailedChild(t *testing.T) {
	var out syncBuffer
	l := &lastLine{w: &out}
	for _, chunk := range []string{"hccl-test: rank 1: in op #3\n", "a note\n", "hccl-test: rank 1, op #3: timed out\n"} {
		if _, err := l.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	l.finish(true)
	if got, want := out.String(), "hccl-test: rank 1: in op #3\na note\n"; got != want {
		t.Errorf("passed on %q, want %q", got, want)
	}
	if got := l.String(); got != "rank 1, op #3: timed out" {
		t.Errorf("last line %q", got)
	}

	var later syncBuffer
	l = &lastLine{w: &later}
	if _, err := l.Write([]byte("hccl-test: rank 2: in op #5\n")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for later.String() == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := later.String(); got != "hccl-test: rank 2: in op #5\n" {
		t.Errorf("a held line of a running child: passed on %q", got)
	}
	l.finish(true)
}

// syncBuffer is a bytes.Buffer that a timer's goroutine may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLastLineCommands: a failed child's error line is held back and
// dropped (its parent's one line repeats it) whichever command printed
// it, the sweep's "hccl-test: " or a command's "hccl-test scenario: ";
// a line that only looks like one is passed on.
func TestLastLineCommands(t *testing.T) {
	tests := []struct {
		line     string
		held     bool
		stripped string // String() once it is the last line
	}{
		{"hccl-test: rank 1, op #3: timed out", true, "rank 1, op #3: timed out"},
		{"hccl-test scenario: world rank 5: peer gone", true, "world rank 5: peer gone"},
		{"hccl-test isolate: round 2: timed out", true, "round 2: timed out"},
		{"hccl-test-old: an error", false, "hccl-test-old: an error"},
		{"hccl-test Scenario: capitals", false, "hccl-test Scenario: capitals"},
		{"hccl-test : a space", false, "hccl-test : a space"},
		{"hccl-testing: another program", false, "hccl-testing: another program"},
		{"a note: hccl-test: inside", false, "a note: hccl-test: inside"},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			var out syncBuffer
			l := &lastLine{w: &out}
			if _, err := l.Write([]byte(tc.line + "\n")); err != nil {
				t.Fatal(err)
			}
			l.finish(true)
			want := tc.line + "\n"
			if tc.held {
				want = ""
			}
			if got := out.String(); got != want {
				t.Errorf("a failed child's line: passed on %q, want %q", got, want)
			}
			if got := l.String(); got != tc.stripped {
				t.Errorf("last line %q, want %q", got, tc.stripped)
			}
		})
	}
}

// TestLastLineKeep: once the run is failing (keep), a child's error line
// waits for the child's end however long it takes, and is dropped if it
// failed; a child that then ends well passes it on.
func TestLastLineKeep(t *testing.T) {
	for _, failed := range []bool{true, false} {
		var out syncBuffer
		l := &lastLine{w: &out}
		l.keep()
		if _, err := l.Write([]byte("hccl-test scenario: world rank 3: peer gone\n")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(holdLine + holdLine/4) // a loaded host: the child exits late
		if got := out.String(); got != "" {
			t.Errorf("a kept line passed on before its child ended: %q", got)
		}
		l.finish(failed)
		want := "hccl-test scenario: world rank 3: peer gone\n"
		if failed {
			want = ""
		}
		if got := out.String(); got != want {
			t.Errorf("child failed=%v: passed on %q, want %q", failed, got, want)
		}
	}
}
