package tcp

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// stoppedChild starts a child process (sleep) as rank 1 of a children,
// killed when the test ends.
func stoppedChild(t *testing.T) (*children, *child) {
	t.Helper()
	return startChild(t, "sleep", "60")
}

// startChild starts name with args as rank 1 of a children, killed when
// the test ends.
func startChild(t *testing.T, name string, args ...string) (*children, *child) {
	t.Helper()
	c := &child{rank: 1, last: &lastLine{}, done: make(chan struct{}), cmd: exec.Command(name, args...)}
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdin = stdin
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cs := &children{procs: []*child{c}}
	cs.wg.Go(func() {
		c.err = c.cmd.Wait()
		close(c.done)
	})
	t.Cleanup(cs.kill)
	return cs, c
}

// signalWait sends sig to c and waits until /proc shows the state it
// asked for: the kernel stops and continues a process asynchronously.
func signalWait(t *testing.T, c *child, sig syscall.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	for (c.stopped() != "") != (sig == syscall.SIGSTOP) {
		time.Sleep(time.Millisecond)
	}
}

// TestWatchStoppedChild: a child stopped for the limit fails the run
// (whatever rank 0 is doing: the watch needs nothing from it), no sooner
// than the limit after the stop and within a few polls of it; a child
// continued before the limit starts the count again; a limit of 0 watches
// nothing. Without the watch, a stopped child was noticed only once rank
// 0 waited on it, -T later.
func TestWatchStoppedChild(t *testing.T) {
	const limit = time.Second
	tests := []struct {
		name   string
		limit  time.Duration
		resume bool // continue the child halfway to the limit and stop it again
		fails  bool
	}{
		{"stopped for the limit", limit, false, true},
		{"continued before the limit, then stopped again", limit, true, true},
		{"no limit", 0, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, c := stoppedChild(t)
			failed := make(chan error, 1)
			var at time.Time
			stop := cs.watch(tc.limit, func(err error) {
				at = time.Now()
				failed <- err
			})
			defer stop()
			signalWait(t, c, syscall.SIGSTOP)
			stoppedAt := time.Now()
			if tc.resume {
				time.Sleep(limit / 4)
				signalWait(t, c, syscall.SIGCONT)
				time.Sleep(5 * childPoll) // a poll sees it running
				signalWait(t, c, syscall.SIGSTOP)
				stoppedAt = time.Now()
			}
			if !tc.fails {
				select {
				case err := <-failed:
					t.Fatalf("failed with %v, want no watch", err)
				case <-time.After(3 * limit):
				}
				return
			}
			// A loaded host delays the poll; the run's bound is the
			// limit plus a second.
			var err error
			select {
			case err = <-failed:
			case <-time.After(limit + 30*time.Second):
				t.Fatalf("no failure %v after the stop", limit+30*time.Second)
			}
			var se *stoppedError
			if !errors.As(err, &se) || se.rank != 1 || se.limit != tc.limit {
				t.Errorf("failed with %#v, want a stoppedError of rank 1, limit %v", err, tc.limit)
			}
			if took := at.Sub(stoppedAt); took < tc.limit-childPoll {
				t.Errorf("failed %v after the stop, before the limit %v", took, tc.limit)
			}
		})
	}
}

// TestWatchExitedChild: a child that exits with an error fails the run at
// once, with no limit needed; one that exits cleanly does not. Without
// it, a rank killed before it joined the rendezvous held rank 0 for the
// whole connect timeout (2 minutes).
func TestWatchExitedChild(t *testing.T) {
	tests := []struct {
		name  string
		sig   syscall.Signal // sent to the child; 0: it exits cleanly
		fails bool
	}{
		{"killed", syscall.SIGKILL, true},
		{"quit before its handler", syscall.SIGQUIT, true},
		{"exits cleanly", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, c := stoppedChild(t)
			if tc.sig == 0 {
				cs, c = startChild(t, "true")
			}
			failed := make(chan error, 1)
			stop := cs.watch(0, func(err error) { failed <- err })
			defer stop()
			if tc.sig != 0 {
				if err := c.cmd.Process.Signal(tc.sig); err != nil {
					t.Fatal(err)
				}
			}
			<-c.done
			if !tc.fails {
				if c.err != nil {
					t.Fatalf("true exited with %v", c.err)
				}
				select {
				case err := <-failed:
					t.Fatalf("failed with %v after a clean exit", err)
				case <-time.After(5 * childPoll):
				}
				return
			}
			select {
			case err := <-failed:
				var ee *exitedError
				if !errors.As(err, &ee) || ee.rank != 1 {
					t.Errorf("failed with %#v, want an exitedError of rank 1", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no failure 30 s after the child exited")
			}
		})
	}
}
