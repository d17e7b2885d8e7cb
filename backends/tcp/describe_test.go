package tcp

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/internal/memguard"
)

// TestDescribeExit: a child killed by a signal is named by the signal's
// number and name ("was killed by killed" before).
func TestDescribeExit(t *testing.T) {
	tests := []struct {
		script, want string
	}{
		{"kill -9 $$", "was killed by signal 9 (SIGKILL)"},
		{"kill -15 $$", "was killed by signal 15 (SIGTERM)"},
		{"exit 3", "exited with status 3"},
	}
	for _, tc := range tests {
		err := exec.Command("sh", "-c", tc.script).Run()
		if got := describeExit(err); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.script, got, tc.want)
		}
	}
}

// TestChildrenFailedBounded: when many children end badly, the error
// describes a few and names the rest as ranges, in bounded length.
func TestChildrenFailedBounded(t *testing.T) {
	cs := &children{}
	for r := 1; r < 100; r++ {
		cmd := exec.Command("sh", "-c", "exit 1")
		err := cmd.Run()
		done := make(chan struct{})
		close(done)
		cs.procs = append(cs.procs, &child{rank: r, last: &lastLine{}, cmd: cmd, done: done, err: err})
	}
	got := cs.failed().Error()
	if !strings.Contains(got, "rank 4 (pid ") || strings.Contains(got, "rank 5 (pid ") ||
		!strings.HasSuffix(got, "; and ranks 5-99 ended badly too") || len(got) > 400 {
		t.Errorf("got %q", got)
	}
}

// TestChildrenCulpritsFirst: children that are stopped or were killed by
// a signal are why the others failed: they are named apart, and first,
// whatever their ranks; a child that is stopped is said to be, and is
// killed at once by kill (SIGTERM would wait for it to be continued).
func TestChildrenCulpritsFirst(t *testing.T) {
	tests := []struct {
		name          string
		scripts       []string // ranks 1.. in order; "STOP" runs a child that is then stopped
		wantCulprits  []string
		wantOthers    []string
		wantNoCulprit bool
	}{
		{"a killed rank after one that exited", []string{"exit 1", "kill -9 $$"},
			[]string{"rank 2 (pid ", "was killed by signal 9 (SIGKILL)"}, []string{"rank 1 (pid ", "exited with status 1"}, false},
		{"a stopped rank", []string{"exit 1", "exit 0", "STOP"},
			[]string{"rank 3 (pid ", "is stopped (by a signal"}, []string{"rank 1 (pid "}, false},
		{"only ranks that exited", []string{"exit 1", "exit 2"},
			nil, []string{"rank 1 (pid ", "rank 2 (pid ", "exited with status 2"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := &children{}
			for i, script := range tc.scripts {
				c := &child{rank: i + 1, last: &lastLine{}, done: make(chan struct{})}
				if script == "STOP" {
					c.cmd = exec.Command("sleep", "60")
				} else {
					c.cmd = exec.Command("sh", "-c", script)
				}
				stdin, err := c.cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				c.stdin = stdin
				if err := c.cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cs.procs = append(cs.procs, c)
				cs.wg.Go(func() {
					c.err = c.cmd.Wait()
					close(c.done)
				})
				if script == "STOP" {
					if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
						t.Fatal(err)
					}
					for c.stopped() == "" { // the kernel stops it asynchronously
						time.Sleep(time.Millisecond)
					}
				} else {
					<-c.done
				}
			}
			culprits, others := cs.report()
			check := func(what string, err error, want []string) {
				t.Helper()
				if want == nil {
					if err != nil {
						t.Errorf("%s: %v, want none", what, err)
					}
					return
				}
				if err == nil {
					t.Fatalf("%s: none, want %q", what, want)
				}
				for _, w := range want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s %q does not say %q", what, err, w)
					}
				}
			}
			check("culprits", culprits, tc.wantCulprits)
			check("others", others, tc.wantOthers)
			if all := cs.failed(); culprits != nil && !strings.HasPrefix(all.Error(), culprits.Error()) {
				t.Errorf("failed() = %q, want the culprits first", all)
			}
			// kill ends a stopped child at once, well before SIGTERM's
			// grace would have let it be continued (it never is).
			killed := make(chan struct{})
			go func() { cs.kill(); close(killed) }()
			select {
			case <-killed:
			case <-time.After(30 * time.Second):
				t.Fatal("kill did not end a stopped child")
			}
		})
	}
}

// TestSayStopped: a rank process that a signal stopped says so as its
// last line, in the form its parent recognises (stoppedBy); one that the
// memory guard stopped, or that failed on its own or not at all, says
// nothing here (the program prints the guard's line itself).
func TestSayStopped(t *testing.T) {
	own := errors.New("allreduce: rank 3, op #7: recv from rank 2: context canceled")
	cancelled := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"a signal", cancelled(errors.New("terminated signal received")), own, "hccl-test: rank process 3 stopped: terminated signal received\n"},
		{"the memory guard", cancelled(&memguard.Exceeded{Resident: 1 << 30}), own, ""},
		{"its own failure", context.Background(), own, ""},
		{"no failure", cancelled(errors.New("terminated signal received")), nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			sayStopped(&out, 3, stopCause(tc.ctx, tc.err))
			if out.String() != tc.want {
				t.Errorf("said %q, want %q", out.String(), tc.want)
			}
			if tc.want == "" {
				return
			}
			l := &lastLine{w: io.Discard}
			if _, err := l.Write([]byte(out.String())); err != nil {
				t.Fatal(err)
			}
			l.finish(true)
			if c := (&child{rank: 3, last: l}); !c.stoppedBy() {
				t.Errorf("the parent does not see %q as the rank's stop", out.String())
			}
		})
	}
}
