package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive flock on f, a regular file an output
// writes, for as long as f is open, so that a second run given the same
// file is refused before it truncates it: two runs writing one CSV would
// leave the rows of one. The error of a file another process holds names
// that process. A file system without flock (some network mounts) is
// written unlocked, as before.
func Lock(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil || !errors.Is(err, unix.EWOULDBLOCK) {
		return nil
	}
	holder := "another process"
	if pid := lockHolder(f); pid > 0 {
		holder = fmt.Sprintf("process %d", pid)
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			holder += " (" + strings.TrimSpace(string(comm)) + ")"
		}
	}
	return fmt.Errorf("being written by %s: give each run its own file", holder)
}

// lockHolder returns the pid of the process holding a flock on f, from
// /proc/locks (flock has no call that tells), or 0 when it cannot tell.
func lockHolder(f *os.File) int {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return 0
	}
	file := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer locks.Close()
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF"; a waiter's
		// line has "->" after the number.
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != file {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil {
			return pid
		}
	}
	return 0
}
