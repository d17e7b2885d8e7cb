package tcp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hccl-test/hccl-test/backends"
)

// children are the rank processes hccl-test -p started: the same program
// with the same arguments, one per rank 1..n-1. Each child's stdin is a
// pipe from this process, so a child sees its parent die, even by SIGKILL
// (the pipe closes), and exits. (Linux's parent-death signal is not used:
// it fires when the OS thread that started the child exits, which in a Go
// program need not be when the process does.)
type children struct {
	procs []*child
	wg    sync.WaitGroup
}

type child struct {
	rank  int
	last  *lastLine // its output's last line: what it said when it failed
	cmd   *exec.Cmd
	stdin io.Closer
	done  chan struct{} // closed when the process has exited
	err   error         // its exit status, valid once done is closed
}

// spawn starts ranks 1..size-1 of a job whose rank 0 listens at master.
// Their output goes to out, never to this process's stdout, so the table
// stays clean.
func spawn(size int, master string, secret []byte, args []string, out io.Writer) (*children, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting ranks: finding this program: %w", err)
	}
	cs := &children{}
	for r := 1; r < size; r++ {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(),
			EnvRank+"="+strconv.Itoa(r), EnvSize+"="+strconv.Itoa(size),
			EnvMaster+"="+master, EnvSecret+"="+string(secret), envParentWatch+"=1")
		last := &lastLine{w: out}
		cmd.Stdout, cmd.Stderr = last, last
		stdin, err := cmd.StdinPipe()
		if err != nil {
			cs.kill()
			return nil, fmt.Errorf("starting rank %d: %w", r, err)
		}
		if err := cmd.Start(); err != nil {
			cs.kill()
			return nil, fmt.Errorf("starting rank %d: %w", r, err)
		}
		c := &child{rank: r, last: last, cmd: cmd, stdin: stdin, done: make(chan struct{})}
		cs.procs = append(cs.procs, c)
		cs.wg.Add(1)
		go func() {
			defer cs.wg.Done()
			c.err = cmd.Wait()
			last.finish(c.err != nil)
			close(c.done)
		}()
	}
	return cs, nil
}

// wait waits up to grace for every child to exit, kills those still running,
// and returns an error naming the ranks that failed.
func (cs *children) wait(grace time.Duration) error {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for _, c := range cs.procs {
		select {
		case <-c.done:
		case <-timer.C:
			cs.kill()
			<-c.done
		}
	}
	return cs.failed()
}

// exited returns an error naming the children that have ended badly, or
// nil. A child whose death made this rank fail has usually not been reaped
// yet when the failure shows, so it gives them a moment: up to 300 ms for a
// first one, then 100 ms more for the others that died with it (a killed
// rank's neighbours exit right after it, and may be reaped first).
func (cs *children) exited() error {
	deadline := time.Now().Add(300 * time.Millisecond)
	settled := false
	for time.Now().Before(deadline) {
		if !settled && cs.anyFailed() {
			settled = true
			deadline = time.Now().Add(100 * time.Millisecond)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cs.failed()
}

// anyFailed reports whether a child has already ended badly.
func (cs *children) anyFailed() bool {
	for _, c := range cs.procs {
		select {
		case <-c.done:
			if c.err != nil {
				return true
			}
		default:
		}
	}
	return false
}

// failed names, on one line, the children that have already ended badly.
func (cs *children) failed() error {
	var msgs []string
	var more []int // failed ranks past maxChildDetails, named as ranges
	for _, c := range cs.procs {
		select {
		case <-c.done:
			if c.err != nil && len(msgs) == maxChildDetails {
				more = append(more, c.rank)
			} else if c.err != nil {
				msg := fmt.Sprintf("rank %d (pid %d) %v", c.rank, c.cmd.Process.Pid, describeExit(c.err))
				if said := c.last.String(); said != "" {
					msg += ": " + said
				}
				msgs = append(msgs, msg)
			}
		default:
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if len(more) > 0 {
		msgs = append(msgs, fmt.Sprintf("and %s ended badly too", backends.RankList(more)))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// maxChildDetails is how many children that ended badly an error
// describes one by one (how each ended, its last line); the rest it names
// as ranges of ranks.
const maxChildDetails = 4

// kill ends every child still running and waits for them.
func (cs *children) kill() {
	for _, c := range cs.procs {
		c.stdin.Close()
		select {
		case <-c.done:
		default:
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.After(2 * time.Second)
	for _, c := range cs.procs {
		select {
		case <-c.done:
		case <-deadline:
			_ = c.cmd.Process.Kill()
		}
	}
	cs.wg.Wait()
}

// describeExit says how a child ended.
func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Signal.String is the description ("killed"), not the name.
			return fmt.Sprintf("was killed by signal %d (%s)", int(ws.Signal()), unix.SignalName(ws.Signal()))
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return err.Error()
}

// watchParent makes a child started by hccl-test -p exit as soon as its
// parent is gone, which shows as the end of its stdin pipe, saying so on
// log. If stdin cannot be read, it watches its parent process id instead.
func watchParent(log io.Writer) {
	if getenv(envParentWatch) == "" {
		return
	}
	parent := os.Getppid()
	gone := func(why string) {
		fmt.Fprintf(log, "hccl-test: rank %s: the parent process is gone (%s); exiting\n", getenv(EnvRank), why)
		os.Exit(1)
	}
	go func() {
		_, err := io.Copy(io.Discard, os.Stdin)
		if err == nil {
			gone("its pipe closed")
		}
		for range time.Tick(200 * time.Millisecond) {
			if os.Getppid() != parent {
				gone("reparented")
			}
		}
	}()
}

// forwardSIGQUIT passes SIGQUIT on to every child until they have all
// exited, so that each rank reports what it is doing (the status report),
// not only this one.
func (cs *children) forwardSIGQUIT() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGQUIT)
	all := make(chan struct{})
	go func() {
		for _, c := range cs.procs {
			<-c.done
		}
		close(all)
	}()
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ch:
				for _, c := range cs.procs {
					select {
					case <-c.done:
					default:
						_ = c.cmd.Process.Signal(syscall.SIGQUIT)
					}
				}
			case <-all:
				return
			}
		}
	}()
}
