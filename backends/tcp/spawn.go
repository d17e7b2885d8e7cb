package tcp

import (
	"bytes"
	"context"
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
	"github.com/hccl-test/hccl-test/internal/memguard"
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
		cmd.Args[0] = os.Args[0] // the name it was called by, which may choose its defaults (all_reduce_perf)
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

// exited names the children that are stopped or were killed by a signal
// (culprits: why this rank failed), and the others that have ended badly,
// each nil when there is none; from then on, each child's last line is
// its parent's to tell (lastLine.keep). A child whose death made this rank fail
// has usually not been reaped yet when the failure shows, so it gives
// them a moment: up to 300 ms for a first one, then 100 ms more for the
// others that died with it (a killed rank's neighbours exit right after
// it, and may be reaped first); no more once every child has exited.
func (cs *children) exited() (culprits, others error) {
	for _, c := range cs.procs {
		c.last.keep()
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	settled := false
	for time.Now().Before(deadline) && !cs.allDone() {
		if !settled && cs.anyFailed() {
			settled = true
			deadline = time.Now().Add(100 * time.Millisecond)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cs.report()
}

// allDone reports whether every child has exited.
func (cs *children) allDone() bool {
	for _, c := range cs.procs {
		select {
		case <-c.done:
		default:
			return false
		}
	}
	return true
}

// anyFailed reports whether a child has already ended badly, or is
// stopped.
func (cs *children) anyFailed() bool {
	for _, c := range cs.procs {
		select {
		case <-c.done:
			if c.err != nil {
				return true
			}
		default:
			if c.stopped() != "" {
				return true
			}
		}
	}
	return false
}

// failed names, on one line, the children that are stopped or have
// already ended badly, culprits first.
func (cs *children) failed() error {
	culprits, others := cs.report()
	switch {
	case culprits == nil:
		return others
	case others == nil:
		return culprits
	}
	return fmt.Errorf("%v; %v", culprits, others)
}

// report names, one line each, the children that are stopped or were
// killed by a signal (culprits: such a rank is why the others failed,
// timed out or found their links broken), and the others that have
// already ended badly; at most maxChildDetails in all one by one, and the
// rest as ranges of ranks.
func (cs *children) report() (culprits, others error) {
	var first, then []*child
	for _, c := range cs.procs {
		select {
		case <-c.done:
			var ee *exec.ExitError
			switch {
			case c.err == nil:
			case errors.As(c.err, &ee) && ee.ExitCode() == -1, c.stoppedBy(): // by a signal
				first = append(first, c)
			default:
				then = append(then, c)
			}
		default:
			if c.stopped() != "" {
				first = append(first, c)
			}
		}
	}
	room := maxChildDetails
	var more []int // failed ranks past maxChildDetails, named as ranges
	describe := func(cs []*child) []string {
		var msgs []string
		for _, c := range cs {
			switch {
			case room == 0:
				more = append(more, c.rank)
				continue
			case c.err == nil:
				msgs = append(msgs, fmt.Sprintf("rank %d (pid %d) is stopped (%s)", c.rank, c.cmd.Process.Pid, c.stopped()))
			default:
				msg := fmt.Sprintf("rank %d (pid %d) %v", c.rank, c.cmd.Process.Pid, describeExit(c.err))
				if said := c.last.String(); said != "" {
					msg += ": " + said
				}
				msgs = append(msgs, msg)
			}
			room--
		}
		return msgs
	}
	a, b := describe(first), describe(then)
	if len(more) > 0 {
		b = append(b, fmt.Sprintf("and %s ended badly too", backends.RankList(more)))
	}
	if len(a) > 0 {
		culprits = errors.New(strings.Join(a, "; "))
	}
	if len(b) > 0 {
		others = errors.New(strings.Join(b, "; "))
	}
	return culprits, others
}

// maxChildDetails is how many children that ended badly an error
// describes one by one (how each ended, its last line); the rest it names
// as ranges of ranks.
const maxChildDetails = 4

// killGrace is how long children sent SIGTERM get to exit before SIGKILL.
// A failed run's children end on their own once rank 0's links close, in
// a few milliseconds; the grace bounds one that does not, so that the run
// ends within a second of its failure (a stopped child is killed at once:
// SIGTERM would wait for it to be continued).
const killGrace = 500 * time.Millisecond

// kill ends every child still running and waits for them.
func (cs *children) kill() {
	for _, c := range cs.procs {
		c.stdin.Close()
		select {
		case <-c.done:
		default:
			if c.stopped() != "" {
				_ = c.cmd.Process.Kill()
			} else {
				_ = c.cmd.Process.Signal(syscall.SIGTERM)
			}
		}
	}
	deadline := time.After(killGrace)
	for _, c := range cs.procs {
		select {
		case <-c.done:
		case <-deadline:
			_ = c.cmd.Process.Kill()
		}
	}
	cs.wg.Wait()
}

// stopped says how c's process is stopped (SIGSTOP, Ctrl-Z, a debugger),
// from its state in /proc, or returns "" when it runs or cannot be read.
func (c *child) stopped() string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/stat")
	if err != nil {
		return ""
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return ""
	}
	switch b[i+2] {
	case 'T':
		return "by a signal: SIGSTOP, SIGTSTP or a debugger"
	case 't':
		return "by a debugger"
	}
	return ""
}

// stopCause is the cause a rank process's run was cancelled with from
// outside (a signal) when it failed, or nil. The memory guard's is not
// one: the program prints it, as the process's last line, itself.
func stopCause(ctx context.Context, err error) error {
	if c := backends.StopCause(ctx, err); c != err && memguard.Cause(ctx) == nil {
		return c
	}
	return nil
}

// sayStopped writes, as the last line of a rank process that hccl-test -p
// started, why it stopped when that came from outside (SIGTERM sent to it
// alone): its parent holds the line back, and names the process among
// those that made the run fail (stoppedBy), with it. A child ended by a
// signal it does not catch is named by its exit status.
func sayStopped(log io.Writer, rank int, cause error) {
	if cause != nil {
		fmt.Fprintf(log, "%s: %s%v\n", programName, stoppedPrefix(rank), cause)
	}
}

// stoppedPrefix starts the line sayStopped writes for rank.
func stoppedPrefix(rank int) string { return fmt.Sprintf("rank process %d stopped: ", rank) }

// stoppedBy reports whether c's last line says it stopped from outside.
func (c *child) stoppedBy() bool { return strings.HasPrefix(c.last.String(), stoppedPrefix(c.rank)) }

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
