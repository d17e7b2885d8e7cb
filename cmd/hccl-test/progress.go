package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/units"
)

// Progress draws a progress bar on a terminal while a sweep runs: rows done
// of all rows, the row just measured, and the time left. It exists only
// for terminals, so it never lands in output files or pipes.
type Progress struct {
	tty *os.File

	mu   sync.Mutex // guards the fields below
	p    *mpb.Progress
	bar  *mpb.Bar
	last string // the row just measured
	// rowBytes is the size of every row in the order measured (SetRows);
	// doneBytes and doneWall the rows measured so far and their wall
	// times, lastAt when the latest ended: the time left (etaLeft).
	rowBytes  []int64
	doneBytes []int64
	doneWall  []time.Duration
	lastAt    time.Time
}

// SetRows tells the bar the size of every row the run measures, in order,
// from which it estimates the time left. Without it, every row counts the
// same.
func (pr *Progress) SetRows(bytes []int64) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.rowBytes = bytes
}

// left returns the time left as the bar shows it; pr.mu is held.
func (pr *Progress) left() string {
	done := len(pr.doneBytes)
	if done == 0 {
		return "?"
	}
	return etaLeft(pr.doneBytes, pr.doneWall, pr.rowBytes[min(done, len(pr.rowBytes)):]).Round(time.Second).String()
}

// NewProgress returns a Progress drawing on tty, or nil when tty is not a
// terminal.
func NewProgress(tty *os.File) *Progress {
	if tty == nil || !term.IsTerminal(int(tty.Fd())) {
		return nil
	}
	return &Progress{tty: tty}
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// Writer returns a writer for text meant for the same terminal as the bar
// (the table, when stdout is that terminal): it prints above the bar instead
// of through it.
func (pr *Progress) Writer() io.Writer { return progressWriter{pr} }

type progressWriter struct{ pr *Progress }

func (w progressWriter) Write(b []byte) (int, error) {
	w.pr.mu.Lock()
	p := w.pr.p
	w.pr.mu.Unlock()
	if p == nil {
		return w.pr.tty.Write(b)
	}
	return p.Write(b)
}

// Wrap returns a Sink that advances the bar for every row and passes
// everything on to next.
func (pr *Progress) Wrap(next results.Sink) results.Sink { return &progressSink{pr: pr, next: next} }

type progressSink struct {
	pr   *Progress
	next results.Sink
}

func (s *progressSink) Begin(h results.Header) error {
	pr := s.pr
	if h.TotalRows > 0 {
		pr.mu.Lock()
		pr.last = "starting"
		pr.lastAt = time.Now()
		if len(pr.rowBytes) != h.TotalRows {
			pr.rowBytes = make([]int64, h.TotalRows) // sizes unknown: rows count alike
		}
		pr.p = mpb.New(mpb.WithOutput(pr.tty), mpb.WithWidth(30))
		pr.bar = pr.p.AddBar(int64(h.TotalRows),
			mpb.PrependDecorators(decor.CountersNoUnit("%d/%d rows ")),
			mpb.AppendDecorators(
				decor.Any(func(decor.Statistics) string {
					pr.mu.Lock()
					defer pr.mu.Unlock()
					return " " + pr.last
				}),
				decor.Any(func(decor.Statistics) string {
					pr.mu.Lock()
					defer pr.mu.Unlock()
					return "  left " + pr.left()
				}),
			),
			mpb.BarRemoveOnComplete(),
		)
		pr.mu.Unlock()
	}
	return s.next.Begin(h)
}

func (s *progressSink) Write(r results.Record) error {
	pr := s.pr
	pr.mu.Lock()
	pr.last = fmt.Sprintf("%s %s %s", r.Op, r.DType, units.HumanSize(r.Bytes))
	now := time.Now()
	pr.doneBytes, pr.doneWall = append(pr.doneBytes, r.Bytes), append(pr.doneWall, now.Sub(pr.lastAt))
	pr.lastAt = now
	bar := pr.bar
	pr.mu.Unlock()
	if bar != nil {
		bar.Increment()
	}
	return s.next.Write(r)
}

func (s *progressSink) End(sum results.Summary) error {
	err := s.next.End(sum) // the footer still prints above the bar
	pr := s.pr
	pr.mu.Lock()
	p, bar := pr.p, pr.bar
	pr.mu.Unlock()
	if p != nil {
		bar.Abort(true) // an interrupted run leaves no half-drawn bar
		p.Wait()
		pr.mu.Lock()
		pr.p = nil
		pr.mu.Unlock()
	}
	return err
}
