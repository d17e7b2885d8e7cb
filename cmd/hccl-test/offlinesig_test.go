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
				// milliseconds.
				time.Sleep(time.Second)
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
