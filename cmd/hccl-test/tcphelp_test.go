package main

// Helpers for the end-to-end tests of --backend tcp: processes bounded in
// time and killed at the end of their test if still running.

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/tcp"
)

// small is a sweep that runs in well under a second on loopback.
var small = []string{"--backend", "tcp", "-b", "1K", "-e", "64K", "-n", "2", "-w", "1",
	"--link-bw", "10GB/s", "-T", "30s", "--connect-timeout", "30s"}

// long is a sweep long enough to kill a rank in the middle of: 11 rows
// with 50 timed iterations each.
var long = []string{"--backend", "tcp", "--op", "allreduce", "-b", "1K", "-e", "1M", "-f", "2", "-n", "50", "-w", "1",
	"--link-bw", "10GB/s", "-T", "10s", "--connect-timeout", "10s"}

// args joins flag lists.
func args(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// cleanEnv is this process's environment without anything that would make
// the binary think a launcher started it, or change its timeouts.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "RANK", name == "WORLD_SIZE", name == "LOCAL_RANK", name == "MASTER_ADDR", name == "MASTER_PORT",
			strings.HasPrefix(name, "OMPI_"), strings.HasPrefix(name, "PMI_"), strings.HasPrefix(name, "PMIX_"),
			strings.HasPrefix(name, "SLURM_"), strings.HasPrefix(name, "HCCL_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// torchEnv is the environment torchrun gives rank `rank` of `size`.
func torchEnv(rank, size int, master, secret string) []string {
	host, port, _ := net.SplitHostPort(master)
	env := cleanEnv("RANK="+strconv.Itoa(rank), "WORLD_SIZE="+strconv.Itoa(size), "MASTER_ADDR="+host, "MASTER_PORT="+port)
	if secret != "" {
		env = append(env, tcp.EnvSecret+"="+secret)
	}
	return env
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuf is an output buffer the test reads while the process writes it.
type syncBuf struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is a started process whose output the test watches.
type proc struct {
	name        string
	cmd         *exec.Cmd
	out, errOut syncBuf
	done        chan struct{} // closed once it has exited
	code        int           // exit code, -1 if killed by a signal; valid once done
}

// start starts name (a binary) with args and env; the process is killed
// when the test ends if it is still running.
func start(t *testing.T, label string, env []string, name string, arg ...string) *proc {
	t.Helper()
	p := &proc{name: label, cmd: exec.Command(name, arg...), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", label, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -2
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits up to limit for p to exit and returns its exit code; if p is
// still running then, it kills it and fails the test: a hang.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	t.Fatalf("%s hung: still running after %v\nstdout:\n%s\nstderr:\n%s", p.name, limit, p.out.String(), p.errOut.String())
	return 0
}

// rows returns the table rows of a run's stdout, failing t on a line that
// is neither a comment nor a row.
func rows(t *testing.T, stdout string) [][]string {
	t.Helper()
	var out [][]string
	for _, line := range strings.Split(stdout, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("row does not parse: %q", line)
			continue
		}
		out = append(out, m)
	}
	return out
}

// checkTable checks a complete, correct table of a run on `ranks` ranks:
// the header, want rows all with 0 wrong elements, types among dtypes,
// and the footer.
func checkTable(t *testing.T, stdout string, ranks, want int, dtypes []string) {
	t.Helper()
	checkTableOn(t, "tcp", stdout, ranks, want, dtypes)
}

// checkTableOn is checkTable of a run on backend.
func checkTableOn(t *testing.T, backend, stdout string, ranks, want int, dtypes []string) {
	t.Helper()
	if h := fmt.Sprintf("# backend %s  ranks %d ", backend, ranks); !strings.Contains(stdout, h) {
		t.Errorf("no header %q in stdout:\n%s", h, stdout)
	}
	rs := rows(t, stdout)
	if len(rs) != want {
		t.Errorf("%d rows, want %d", len(rs), want)
	}
	for _, m := range rs {
		if m[11] != "0" {
			t.Errorf("row with %s wrong elements: %q", m[11], m[0])
		}
		found := false
		for _, d := range dtypes {
			found = found || m[3] == d
		}
		if !found {
			t.Errorf("row of type %s, asked for %v: %q", m[3], dtypes, m[0])
		}
	}
	if !strings.Contains(stdout, "# wrong elements: 0 OK") {
		t.Errorf("footer lacks \"# wrong elements: 0 OK\":\n%s", stdout)
	}
}

// procInfo is a running process as /proc shows it.
type procInfo struct {
	pid, ppid int
	rank      string // HCCL_TEST_RANK, for ranks hccl-test -p started
}

// running lists the processes running the program at bin: the test's
// binary lives in its own temporary directory, so these are the test's
// processes and their descendants.
func running(t *testing.T, bin string) []procInfo {
	t.Helper()
	want, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to look for leftover processes in: %v", err)
	}
	var out []procInfo
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe"))
		if err != nil || exe != want {
			continue // gone, a zombie, not ours to read, or another program
		}
		pi := procInfo{pid: pid}
		if stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil {
			// "pid (comm) state ppid ...": comm may hold anything but
			// ends at the last ')'.
			if i := bytes.LastIndexByte(stat, ')'); i > 0 {
				if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
					pi.ppid, _ = strconv.Atoi(f[1])
				}
			}
		}
		if env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ")); err == nil {
			for _, kv := range bytes.Split(env, []byte{0}) {
				if v, ok := bytes.CutPrefix(kv, []byte(tcp.EnvRank+"=")); ok {
					pi.rank = string(v)
				}
			}
		}
		out = append(out, pi)
	}
	return out
}

// noLeftovers fails t if any process still runs bin, and kills them.
func noLeftovers(t *testing.T, bin string) {
	t.Helper()
	left := running(t, bin)
	for _, p := range left {
		t.Errorf("leftover process %d (parent %d, rank %q) still running %s", p.pid, p.ppid, p.rank, bin)
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

// waitRows waits up to limit for at least n rows in p's stdout.
func waitRows(t *testing.T, p *proc, n int, limit time.Duration) {
	t.Helper()
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if strings.Count(p.out.String(), "\n ") >= n {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%d) before printing %d rows\nstdout:\n%s\nstderr:\n%s", p.name, p.code, n, p.out.String(), p.errOut.String())
		default:
		}
	}
	t.Fatalf("%s printed no %d rows within %v\nstdout:\n%s", p.name, n, limit, p.out.String())
}
