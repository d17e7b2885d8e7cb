package tcp

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/launcher"
)

// board is a file through which rank 0 of a job whose ranks share one host
// tells the others its address and the job's secret. It lives in a
// directory only this user can enter (the launcher's per-job session
// directory, or one of ours under the temporary directory), under a name
// that only this job uses; it is created 0600 and replaced atomically, and
// a rank trusts it only when this user owns it and nobody else can read
// or write it. It also names rank 0's process (pid and start time), so a
// file left by a job that died is recognised and waited past, never used.
type board struct {
	path string // the file
	job  string // the job, for messages: "Open MPI job 1909719041"
	own  bool   // rank 0 wrote it and removes it
}

// boardMagic opens every board file.
const boardMagic = "hccl-test rendezvous 1"

// ourTempDir returns this user's directory for boards under the system's
// temporary directory ($TMPDIR, else /tmp), creating it 0700.
func ourTempDir() (string, error) {
	dir := filepath.Join(os.TempDir(), "hccl-test-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	return dir, nil
}

// privateDir checks that dir is a directory (not a link to one) that this
// user owns and no one else can write to or enter.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is %s, not a directory", dir, launcher.Kind(fi.Mode()))
	}
	if err := ownedByUs(fi); err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("directory %s has mode %04o: others may enter it (want 0700)", dir, fi.Mode().Perm())
	}
	return nil
}

// ownedByUs checks that fi belongs to this process's user.
func ownedByUs(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("cannot tell its owner")
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("owned by uid %d, not this user (uid %d)", st.Uid, os.Getuid())
	}
	return nil
}

// newBoard is the board named name in dir, for the job described by job.
func newBoard(dir, name, job string) (*board, error) {
	if err := privateDir(dir); err != nil {
		return nil, fmt.Errorf("%s: rendezvous file: %w", job, err)
	}
	return &board{path: filepath.Join(dir, name), job: job}, nil
}

// publish writes addr and secret to the board, replacing a file left by
// an earlier job of the same name.
func (b *board) publish(_ context.Context, addr string, secret []byte, _ time.Time) error {
	pid := os.Getpid()
	content := fmt.Sprintf("%s\naddr %s\nsecret %s\npid %d\nstart %d\n", boardMagic, addr,
		hex.EncodeToString(secret), pid, processStart(pid))
	f, err := os.CreateTemp(filepath.Dir(b.path), ".tmp-"+filepath.Base(b.path)+"-*")
	if err != nil {
		return fmt.Errorf("%s: writing the rendezvous file: %w", b.job, err)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(f.Name(), b.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%s: writing the rendezvous file %s: %w", b.job, b.path, err)
	}
	b.own = true
	return nil
}

// await waits until deadline for rank 0's board and returns what it says.
// A file that this user does not own, or that others may read, ends the
// wait with an error; a file from a process that is gone is waited past.
func (b *board) await(ctx context.Context, deadline time.Time) (string, []byte, error) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	stale, began := "", time.Now()
	for {
		addr, secret, why, err := b.read()
		switch {
		case err != nil:
			return "", nil, err
		case why == "":
			return addr, secret, nil
		case why != "absent":
			stale = why
		}
		if !time.Now().Before(deadline) {
			note := "it was never written"
			if stale != "" {
				note = "the file there " + stale
			}
			return "", nil, fmt.Errorf("%s: %w: waited %v for rank 0's address in %s: %s (rank 0 did not start, or is slow: --connect-timeout)",
				b.job, backends.ErrTimeout, time.Since(began).Round(time.Millisecond), b.path, note)
		}
		select {
		case <-ctx.Done():
			return "", nil, fmt.Errorf("%s: waiting for rank 0's address in %s: %w", b.job, b.path, backends.ContextError(ctx))
		case <-tick.C:
		}
	}
}

// read reads the board once. why is "absent" when there is no file yet,
// another reason when the file is not this job's (stale, or half made),
// and "" when addr and secret are good; err is a file that must not be
// trusted.
func (b *board) read() (addr string, secret []byte, why string, err error) {
	fi, err := os.Lstat(b.path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, "absent", nil
	}
	if err != nil {
		return "", nil, "", fmt.Errorf("%s: rendezvous file: %w", b.job, err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return "", nil, "", fmt.Errorf("%s: rendezvous file %s is %s, not a regular file: not trusted", b.job, b.path, launcher.Kind(fi.Mode()))
	case ownedByUs(fi) != nil:
		return "", nil, "", fmt.Errorf("%s: rendezvous file %s is %v: not trusted", b.job, b.path, ownedByUs(fi))
	case fi.Mode().Perm()&0o077 != 0:
		return "", nil, "", fmt.Errorf("%s: rendezvous file %s has mode %04o, open to others (want 0600): not trusted", b.job, b.path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(b.path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, "absent", nil
	}
	if err != nil {
		return "", nil, "", fmt.Errorf("%s: rendezvous file: %w", b.job, err)
	}
	f, ok := parseBoard(data)
	if !ok {
		return "", nil, "is not one hccl-test wrote", nil
	}
	pid, _ := strconv.Atoi(f["pid"])
	start, _ := strconv.ParseUint(f["start"], 10, 64)
	if pid <= 0 || !processAlive(pid, start) {
		return "", nil, fmt.Sprintf("was left by process %s, which is gone", f["pid"]), nil
	}
	secret, err = hex.DecodeString(f["secret"])
	if err != nil || len(secret) == 0 || checkAddress(f["addr"]) != nil {
		return "", nil, "is not one hccl-test wrote", nil
	}
	return f["addr"], secret, "", nil
}

// parseBoard reads the fields of a board file.
func parseBoard(data []byte) (map[string]string, bool) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) < 1 || lines[0] != boardMagic {
		return nil, false
	}
	f := map[string]string{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, " ")
		if !ok {
			return nil, false
		}
		f[k] = v
	}
	for _, k := range []string{"addr", "secret", "pid", "start"} {
		if f[k] == "" {
			return nil, false
		}
	}
	return f, true
}

// close removes the board if this rank wrote it.
func (b *board) close() {
	if b.own {
		os.Remove(b.path)
		b.own = false
	}
}

// processStart returns the start time of process pid in clock ticks since
// boot (Linux's /proc/PID/stat), or 0 where that cannot be read.
func processStart(pid int) uint64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing parenthesis. starttime is field 22; field 3
	// follows the parenthesis.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(fields[19], 10, 64)
	return n
}

// processAlive reports whether pid is running and, where start times can
// be read, is the process that started at start (not a later one that
// reuses its number).
func processAlive(pid int, start uint64) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	now := processStart(pid)
	return now == 0 || start == 0 || now == start
}
