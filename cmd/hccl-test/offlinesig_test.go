package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSignalWhileComputing: fit, predict and isolate of logs, stopped by
// SIGINT, SIGTERM or SIGHUP while they read and compute, end at once with
// one line saying which signal and the status 128+n, not killed without
// a word. Each input takes seconds of CPU; a run that ended before the
// signal came proves nothing and is skipped.
func TestSignalWhileComputing(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	one, err := os.ReadFile("../../results/testdata/logs/nccl-tests-2.19.log")
	must(t, err)
	log := filepath.Join(dir, "many.log")
	must(t, os.WriteFile(log, bytes.Repeat(one, 100), 0o644)) // fit's cost grows with the rows
	pair, err := os.ReadFile("../../isolate/testdata/cluster6/node01-node02.log")
	must(t, err)
	logs := filepath.Join(dir, "logs")
	must(t, os.Mkdir(logs, 0o755))
	for i := range 1000 {
		must(t, os.WriteFile(filepath.Join(logs, fmt.Sprintf("h%d-h%d.log", i, i+1)), pair, 0o644))
	}
	commands := []struct {
		name string
		args []string
	}{
		{"fit", []string{"fit", "-o", filepath.Join(dir, "m.json"), log}},
		{"predict", []string{"predict", "--model", "../../predict/testdata/model.json", "--topology", "servers=1,per-server=65536",
			"-b", "1", "-e", "1024T", "--algo", "dbtree"}},
		{"isolate", []string{"isolate", logs}},
	}
	for _, c := range commands {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
			t.Run(c.name+" "+unix.SignalName(sig), func(t *testing.T) {
				cmd := exec.Command(bin, c.args...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				must(t, cmd.Start())
				// Into the reading or the computing: the inputs take
				// seconds of CPU, the flags before the handler a few
				// milliseconds, so a process that has spent a fifth of
				// a second of CPU is computing, however long a loaded
				// machine took to schedule it.
				waitCPU(t, cmd.Process.Pid, 200*time.Millisecond)
				must(t, cmd.Process.Signal(sig))
				err := cmd.Wait()
				code := cmd.ProcessState.ExitCode()
				if err == nil {
					t.Skipf("%s ended before the signal", c.name)
				}
				lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
				want := fmt.Sprintf("%s %s: interrupted (%s)", programName, c.name, unix.SignalName(sig))
				if code != 128+int(sig) || len(lines) != 1 || lines[0] != want {
					t.Errorf("exit %d (%v), stderr %q: want exit %d and the one line %q", code, err, stderr.String(), 128+int(sig), want)
				}
				if stdout.Len() > 0 {
					t.Errorf("stdout holds %d bytes: the computing was not stopped", stdout.Len())
				}
			})
		}
	}
}

// waitCPU waits until process pid has used at least d of CPU time (user
// and system, from /proc/PID/stat), or has ended, or a minute has passed.
func waitCPU(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	const tick = 10 * time.Millisecond // USER_HZ = 100 on Linux
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return // ended (or no /proc): the signal finds it gone
		}
		// The fields after the command's ")" : state is the first, utime
		// and stime the 12th and 13th.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 || f[0] == "Z" {
			return
		}
		var ut, st int64
		fmt.Sscan(f[11], &ut)
		fmt.Sscan(f[12], &st)
		if time.Duration(ut+st)*tick >= d {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d used less than %v of CPU in a minute", pid, d)
}
