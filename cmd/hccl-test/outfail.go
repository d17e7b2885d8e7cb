package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

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
// within outputIdle, and records the failures in the order of outs. The
// outputs are waited on together, so that the wait is outputIdle once,
// not once an output (two FIFOs nobody opened took 20 s one after the
// other).
func (f *outputFailures) drain(outs ...io.Writer) {
	errs := make([]error, len(outs))
	var wg sync.WaitGroup
	for i, w := range outs {
		if o, ok := w.(*outfile.Writer); ok {
			wg.Go(func() { _, _, errs[i] = o.Drain(outputIdle) })
		}
	}
	wg.Wait()
	for _, err := range errs {
		f.add(err)
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
