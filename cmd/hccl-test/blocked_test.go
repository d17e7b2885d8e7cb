package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/internal/wallbound"
	"golang.org/x/sys/unix"
)

// manyRows is a sweep of about 3500 rows in well under a second: a table
// of about 430 KB and a CSV of about 860 KB, both more than a pipe holds.
// The data types and reductions are named rather than "all", which has
// grown (fp8, mulsum) to a sweep that is still running when the tests
// signal it under -race on a loaded machine.
var manyRows = []string{"-p", "2", "-b", "4", "-e", "64", "-f", "1.1", "-n", "1", "-w", "0",
	"--link-bw", "1GB/s", "--op", "all", "-d", "int8,uint8,int16,uint16,int32,uint32,int64,uint64,fp16,bf16,fp32,fp64",
	"-o", "sum,prod,max,min,avg"}

// signalAndWait sends sig to cmd, waits for it to end and returns how long
// that took; it kills cmd and fails the test if it has not ended 10 seconds
// after the signal: a program deaf to signals.
func signalAndWait(t *testing.T, cmd *exec.Cmd, sig os.Signal) time.Duration {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running 10 s after %v: deaf to the signal", sig)
		return 0
	}
}

// TestBlockedOutputs: an output that takes nothing (a FIFO nobody reads, a
// pipe nobody reads) does not make the run deaf: on SIGINT or SIGTERM it
// ends within about 2 s with exit 128 + the signal, keeps the rows in the
// other outputs, and says in one line why it stopped and what it could not
// write.
func TestBlockedOutputs(t *testing.T) {
	bin := buildBinary(t)
	t.Run("fifo without reader", func(t *testing.T) {
		dir := t.TempDir()
		fifo, jsonPath := filepath.Join(dir, "fifo"), filepath.Join(dir, "rows.jsonl")
		must(t, syscall.Mkfifo(fifo, 0o600))
		cmd := exec.Command(bin, append([]string{"--csv", fifo, "--json", jsonPath}, manyRows...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		must(t, cmd.Start())
		// Signal once a row is measured (in --json), not after a fixed
		// pause, which a loaded host can spend before the first row.
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if data, _ := os.ReadFile(jsonPath); bytes.Contains(data, []byte("\n")) {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("no row in --json 60 s after the start; stderr %q", stderr.String())
			}
		}
		took := signalAndWait(t, cmd, syscall.SIGINT)
		checkInterrupted(t, cmd, took, stderr.String(), "--csv "+fifo, "no reader")
		data, err := os.ReadFile(jsonPath)
		must(t, err)
		rows := len(tableRowLines(stdout.String()))
		if got := strings.Count(string(data), "\n"); rows == 0 || got != rows {
			t.Errorf("--json holds %d rows, the table %d: want every row measured", got, rows)
		}
	})
	t.Run("fifo without reader, signal mid-sweep", func(t *testing.T) {
		// The sweep never ends (-N 0): it stops on the FIFO's full
		// queue, so the signal comes while a row is between the
		// outputs. The row the table shows must reach --json too.
		dir := t.TempDir()
		fifo, jsonPath := filepath.Join(dir, "fifo"), filepath.Join(dir, "rows.jsonl")
		must(t, syscall.Mkfifo(fifo, 0o600))
		cmd := exec.Command(bin, "--csv", fifo, "--json", jsonPath, "-N", "0", "-p", "2", "-b", "4", "-e", "64", "-f", "1.1",
			"-n", "1", "-w", "0", "--link-bw", "1GB/s", "--op", "all", "-d", "int8,fp32")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		must(t, cmd.Start())
		// Wait until --json stops growing: the sweep waits for room in
		// the FIFO's queue.
		last, still := -1, 0
		for deadline := time.Now().Add(60 * time.Second); still < 3 && time.Now().Before(deadline); {
			time.Sleep(300 * time.Millisecond)
			data, _ := os.ReadFile(jsonPath)
			if n := len(data); n > 0 && n == last {
				still++
			} else {
				last, still = n, 0
			}
		}
		took := signalAndWait(t, cmd, syscall.SIGINT)
		checkInterrupted(t, cmd, took, stderr.String(), "--csv "+fifo, "no reader")
		data, err := os.ReadFile(jsonPath)
		must(t, err)
		rows := len(tableRowLines(stdout.String()))
		if got := strings.Count(string(data), "\n"); rows == 0 || got != rows {
			t.Errorf("--json holds %d rows, the table %d: want every row measured", got, rows)
		}
	})
	t.Run("fifo with a late reader", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "fifo")
		must(t, syscall.Mkfifo(fifo, 0o600))
		got := make(chan []byte, 1)
		go func() {
			time.Sleep(300 * time.Millisecond)
			f, err := os.Open(fifo)
			if err != nil {
				got <- nil
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			got <- b
		}()
		stdout, stderr, code := runBinary(t, bin, "--csv", fifo, "-p", "2", "-b", "1K", "-e", "4K", "-n", "1", "-w", "0", "--link-bw", "1GB/s")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var b []byte
		select {
		case b = <-got:
		case <-time.After(10 * time.Second):
			// The program wrote and closed before the reader came: end
			// the reader's wait with a writer of the test's own.
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			<-got
		}
		if strings.Count(string(b), "\n") != 1+len(tableRowLines(stdout)) {
			t.Errorf("the FIFO's reader got %q for a table of %d rows", b, len(tableRowLines(stdout)))
		}
	})
	t.Run("stdout pipe nobody reads", func(t *testing.T) {
		r, w, err := os.Pipe()
		must(t, err)
		defer r.Close()
		cmd := exec.Command(bin, manyRows...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &stderr
		must(t, cmd.Start())
		w.Close()
		// Wait until the pipe is full: the program then has more to write
		// than anyone takes. A write that does not fit waits whole, so a
		// full pipe may hold a little less than its size.
		size, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
		must(t, err)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ); err == nil && n >= size-4096 {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("the pipe never filled up; stderr %q", stderr.String())
			}
		}
		// The pipe may have filled just as a row ended: let the run measure
		// rows that then wait in the queue, as they would behind | less.
		time.Sleep(500 * time.Millisecond)
		took := signalAndWait(t, cmd, syscall.SIGTERM)
		checkInterrupted(t, cmd, took, stderr.String(), "stdout", "its reader took nothing")
		if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
			t.Errorf("exit %d after SIGTERM, want %d", code, 128+int(syscall.SIGTERM))
		}
	})
}

// loadSlack is the slack a bound on how soon the program ends gets on this
// host as loaded now: wallbound's slack over the quickest of three runs of
// bin --version (a start and an exit, which a loaded host makes slow as it
// does the end of a run).
func loadSlack(t *testing.T, bin string) time.Duration {
	t.Helper()
	return wallbound.Slack(wallbound.Baseline(func() {
		if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
			t.Fatalf("%s --version: %v\n%s", bin, err, out)
		}
	}))
}

// checkInterrupted checks that cmd ended by a signal's exit code (128 + the
// signal) within the promised 2 s (and slack for the host's load,
// loadSlack) and that stderr says, in one line, what the output named
// could not take and why.
func checkInterrupted(t *testing.T, cmd *exec.Cmd, took time.Duration, stderr, output, why string) {
	t.Helper()
	if code := cmd.ProcessState.ExitCode(); code <= 128 || code > 128+64 {
		t.Errorf("exit %d, want 128 + a signal; stderr %q", code, stderr)
	}
	if n := strings.Count(stderr, "\n"); n != 1 {
		t.Errorf("stderr holds %d lines, want 1: %q", n, stderr)
	}
	if limit := 2*time.Second + loadSlack(t, cmd.Path); took > limit {
		t.Errorf("ended %v after the signal, want about 2 s at most (%v on this host's load)", took, limit)
	}
	var said []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.Contains(l, "not written") {
			said = append(said, l)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], output+": ") || !strings.Contains(said[0], why) {
		t.Errorf("stderr %q: want one line saying what %s did not take (%s)", stderr, output, why)
	}
}

// tableRowLines returns the lines of a table that are rows.
func tableRowLines(table string) []string {
	var rows []string
	for _, l := range strings.Split(table, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	return rows
}

// TestSIGQUITBeforeRun: SIGQUIT while no rank runs (here while --help
// waits for a pipe of one page to be read) prints the status report and
// leaves the program going, rather than Go's default of a goroutine dump
// and exit 2.
func TestSIGQUITBeforeRun(t *testing.T) {
	bin := buildBinary(t)
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(bin, "--help") // about 11 KB: more than the pipe holds
	var stderr syncBuf
	cmd.Stdout, cmd.Stderr = w, &stderr
	must(t, cmd.Start())
	w.Close()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() { _ = cmd.Process.Kill(); <-done }()
	// Signal once the help is being written, so past the program's
	// start, whatever the host's load makes that take; then the status
	// report must come while the program waits for the pipe.
	waitFor(t, "the help in the pipe", func() bool {
		n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ)
		return err == nil && n > 0
	})
	must(t, cmd.Process.Signal(syscall.SIGQUIT))
	waitFor(t, "the status report", func() bool {
		select {
		case <-done:
			t.Fatalf("SIGQUIT ended the program: exit %d, stderr %q", cmd.ProcessState.ExitCode(), stderr.String())
		default:
		}
		return strings.Contains(stderr.String(), "no rank is running")
	})
	help, _ := io.ReadAll(r)
	<-done
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(string(help), "Usage: hccl-test") {
		t.Errorf("exit %d after its help was read (%d bytes), want 0", code, len(help))
	}
	if s := stderr.String(); strings.Contains(s, "goroutine ") || !strings.Contains(s, "no rank is running") {
		t.Errorf("stderr %q: want the status report and no goroutine dump", s)
	}
}

// waitFor polls cond until it holds, failing t if it has not a minute
// later: a wait for an event that must come, bounded against a hang, not
// by how fast a loaded host makes it come.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s a minute later", what)
		}
	}
}

// must fails the test at once on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
