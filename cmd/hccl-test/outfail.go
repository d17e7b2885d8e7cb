package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hccl-test/hccl-test/internal/outfile"
)

// outputFailures is how the commands that write what they have computed
// (fit, predict, convert, isolate) end: every output is written, one
// failing (a full disk, a closed pipe, a FIFO nobody reads) does not keep
// the others from theirs, and the failures are said together in one line.
type outputFailures struct {
	failed []string
}

// add records err, a write's or an output's failure; nil is nothing. The
// errors of an output name it ("--csv x: write: ..."); one said twice
// (by a write and again by the drain) is recorded once.
func (f *outputFailures) add(err error) {
	if err != nil && !slices.Contains(f.failed, err.Error()) {
		f.failed = append(f.failed, err.Error())
	}
}

// drain waits until each of outs (openOutput's writers) has taken its
// bytes, failed, or been given up as a FIFO nobody opened for reading
// within outputIdle, and records the failures.
func (f *outputFailures) drain(outs ...io.Writer) {
	for _, w := range outs {
		if o, ok := w.(*outfile.Writer); ok {
			_, _, err := o.Drain(outputIdle)
			f.add(err)
		}
	}
}

// report prints the failures in one line for command cmd and returns
// exitFailed, or returns code when nothing failed.
func (f *outputFailures) report(stderr io.Writer, cmd string, code int) int {
	if len(f.failed) == 0 {
		return code
	}
	fmt.Fprintf(stderr, "%s %s: %s\n", programName, cmd, oneLineText(strings.Join(f.failed, "; ")))
	return exitFailed
}
