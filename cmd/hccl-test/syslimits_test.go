package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runLimit bounds a child run of these tests: far more than any takes, on
// a loaded machine too, so only a hang reaches it.
const runLimit = 2 * time.Minute

// TestRlimitsRefused runs the binary under rlimits (prlimit) that the run
// would pass: each is refused before any rank starts, exit 2, with one line
// naming the limit, where the Go runtime printed hundreds of lines
// (RLIMIT_AS: out of memory; RLIMIT_NPROC: pthread_create failed) or a
// rank failed to start (RLIMIT_NOFILE). A run that fits still runs.
func TestRlimitsRefused(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit (util-linux) to set a child's rlimits")
	}
	bin := buildBinary(t)
	asNobody := nobody(t, bin)
	tests := []struct {
		name   string
		limit  string
		nobody bool // RLIMIT_NPROC binds no root process
		args   []string
		code   int
		want   string
	}{
		// 2 GB and 64M: a run refused for its address space even where
		// other work holds most of the memory (at 8 GB and 256M the memory
		// guard's "available" refused it first on a loaded host).
		{"ulimit -v 2000000", "--as=2000000000", false, []string{"-p", "8", "-b", "1K", "-e", "64M"}, exitUsage, "RLIMIT_AS"},
		{"ulimit -v, a run that fits", "--as=8192000000", false, []string{"-p", "2", "-b", "1K", "-e", "1M", "-n", "2", "-w", "0"}, exitOK, ""},
		{"ulimit -n 64, tcp -p 32", "--nofile=64", false, []string{"--backend", "tcp", "-p", "32", "-b", "1K", "-e", "1K"}, exitUsage, "RLIMIT_NOFILE"},
		{"ulimit -n 64, proc -p 32", "--nofile=64", false, []string{"--backend", "proc", "-p", "32", "-b", "1K", "-e", "1K"}, exitUsage, "RLIMIT_NOFILE"},
		{"ulimit -n 64, shm -p 32", "--nofile=64", false, []string{"-p", "32", "-b", "1K", "-e", "1K", "-n", "2", "-w", "0"}, exitOK, ""},
		{"ulimit -u 12, shm -p 8", "--nproc=12", true, []string{"-p", "8", "-b", "1K", "-e", "1M"}, exitUsage, "RLIMIT_NPROC"},
		{"ulimit -u 40, tcp -p 8", "--nproc=40", true, []string{"--backend", "tcp", "-p", "8", "-b", "1K", "-e", "1K"}, exitUsage, "RLIMIT_NPROC"},
		{"ulimit -u 64, shm -p 2", "--nproc=64", true, []string{"-p", "2", "-b", "1K", "-e", "1K", "-n", "2", "-w", "0"}, exitOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(prlimit, append([]string{tc.limit, bin}, tc.args...)...)
			if tc.nobody {
				if asNobody == nil {
					t.Skip("RLIMIT_NPROC binds no root process, and there is no other user to run as")
				}
				cmd.SysProcAttr = asNobody
				cmd.Dir = filepath.Dir(bin)
			}
			code, stderr := runCmd(t, cmd)
			if code != tc.code || strings.Count(stderr, "\n") > 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d with one line naming %q; stderr (%d lines) %.600q",
					code, tc.code, tc.want, strings.Count(stderr, "\n"), stderr)
			}
		})
	}
}

// TestMemoryCgroupRefused moves the binary into a memory cgroup of 2 GiB,
// made below the test's own (v2, else v1): a run estimated at 8.5 GiB is
// refused with one line naming the cgroup, where the kernel killed it
// (exit 137, nothing on stderr); a small run still runs in it.
func TestMemoryCgroupRefused(t *testing.T) {
	dir, file := memoryCgroup(t, 2<<30)
	bin := buildBinary(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"-p 8 -e 256M", []string{"-p", "8", "-b", "1K", "-e", "256M"}, exitUsage, "memory cgroup"},
		{"tcp -p 4 -e 256M", []string{"--backend", "tcp", "-p", "4", "-b", "1K", "-e", "256M"}, exitUsage, "memory cgroup"},
		{"a run that fits", []string{"-p", "2", "-b", "1K", "-e", "1M", "-n", "2", "-w", "0"}, exitOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			script := `echo $$ > "$0/cgroup.procs" && exec "$@"`
			cmd := exec.Command("sh", append([]string{"-c", script, dir, bin}, tc.args...)...)
			code, stderr := runCmd(t, cmd)
			if code != tc.code || strings.Count(stderr, "\n") > 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("in %s (%s): exit %d, want %d with one line naming %q; stderr %.600q", dir, file, code, tc.code, tc.want, stderr)
			}
		})
	}
}

// memoryCgroup makes a cgroup with a memory limit of limit bytes below
// this process's own, removed when the test ends, and returns its
// directory and the file that holds the limit; it skips the test, saying
// why, where it cannot.
func memoryCgroup(t *testing.T, limit int64) (dir, file string) {
	t.Helper()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skip("no /proc/self/cgroup:", err)
	}
	var why []string
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var base, limitFile string
		switch {
		case f[0] == "0" && f[1] == "":
			base, limitFile = "/sys/fs/cgroup", "memory.max"
			if _, err := os.Stat(filepath.Join(base, "cgroup.controllers")); err != nil {
				base = "/sys/fs/cgroup/unified"
			}
		case strings.Contains(","+f[1]+",", ",memory,"):
			base, limitFile = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		parent := filepath.Join(base, f[2])
		d := filepath.Join(parent, fmt.Sprintf("hccl-test-%d", os.Getpid()))
		if err := os.Mkdir(d, 0o755); err != nil {
			why = append(why, fmt.Sprintf("making %s: %v", d, err))
			continue
		}
		t.Cleanup(func() { os.Remove(d) })
		if err := os.WriteFile(filepath.Join(d, limitFile), []byte(fmt.Sprint(limit)), 0o644); err != nil {
			why = append(why, fmt.Sprintf("setting %s: %v (no memory controller there)", limitFile, err))
			continue
		}
		return d, limitFile
	}
	t.Skipf("no memory cgroup this test may make: %s", strings.Join(why, "; "))
	return "", ""
}

// nobody returns the attributes that run a child as a user of its own (a
// uid no account has, in nobody's group), with
// bin's directory opened to it, or nil when this process is not root.
func nobody(t *testing.T, bin string) *syscall.SysProcAttr {
	if os.Getuid() != 0 {
		return nil
	}
	for d := filepath.Dir(bin); d != os.TempDir() && d != "/" && d != "."; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			return nil
		}
	}
	// A uid no account and no other process has (nobody's is shared with
	// the other packages' tests that drop root, whose processes counted
	// against RLIMIT_NPROC and made the Go runtime fail to start a thread
	// in a loaded suite run): the limit counts this run's threads alone.
	uid := uint32(60000 + os.Getpid()%5000)
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: 65534}}
}

// runCmd runs cmd and returns its exit code and stderr. A command still
// running after runLimit is killed and fails the test (before the fix, a
// tcp run whose ranks could not start waited for them without end).
func runCmd(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	timer := time.AfterFunc(runLimit, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("%v still ran after %v: killed; stderr %.600q", cmd.Args, runLimit, e.String())
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), e.String()
	case err != nil:
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	return 0, e.String()
}
