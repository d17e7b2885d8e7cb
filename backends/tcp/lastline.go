package tcp

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// lastLine passes a child's output on to w and keeps its last non-empty
// line (up to maxLastLine bytes), so that the parent can say what a rank
// that failed said about it, such as where it was waiting when an op
// timed out.
type lastLine struct {
	w    io.Writer
	mu   sync.Mutex
	line []byte // the line being written
	last string // the last complete non-empty line
}

const maxLastLine = 4 << 10

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	for _, chunk := range bytes.SplitAfter(p, []byte("\n")) {
		if len(l.line) < maxLastLine {
			l.line = append(l.line, chunk[:min(len(chunk), maxLastLine-len(l.line))]...)
		}
		if bytes.HasSuffix(chunk, []byte("\n")) {
			if s := strings.TrimSpace(string(l.line)); s != "" {
				l.last = s
			}
			l.line = l.line[:0]
		}
	}
	l.mu.Unlock()
	return l.w.Write(p)
}

// String returns the last line, without the program's name in front.
func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, _ := strings.CutPrefix(l.last, "hccl-test: ")
	return s
}
