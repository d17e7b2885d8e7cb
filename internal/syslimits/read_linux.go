package syslimits

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// read reads every limit: the memory ones from s (a fake tree in tests),
// the rlimits from this process.
func read(s system) Limits {
	var l Limits
	if avail, ok := s.memAvailable(); ok {
		l.Memory = Bound{Room: avail, Set: true, Name: "available"}
	}
	for _, b := range s.memoryCgroups() {
		l.Cgroup = l.Cgroup.Tighter(b)
	}
	l.Memory = l.Memory.Tighter(l.Cgroup)
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &r) == nil && !unlimited(r.Cur) {
		held, _ := s.statusField("VmSize") // kB
		l.AddressSpace = Bound{Room: int64(r.Cur) - held<<10, Set: true,
			Name: fmt.Sprintf("left under ulimit -v (RLIMIT_AS %s, %s held)", human(int64(r.Cur)), human(held<<10))}
	}
	if unix.Getrlimit(unix.RLIMIT_NPROC, &r) == nil && !unlimited(r.Cur) && !s.exemptFromNPROC() {
		// This process's own threads are part of the run's need, not of
		// what others hold.
		own, _ := s.statusField("Threads")
		others := max(s.userTasks(os.Getuid())-own, 0)
		l.Tasks = Bound{Room: int64(r.Cur) - others, Set: true,
			Name: fmt.Sprintf("left under ulimit -u (RLIMIT_NPROC %d, %d other threads of this user running)", r.Cur, others)}
	}
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) == nil && !unlimited(r.Cur) {
		open := s.openFiles()
		l.FileLimit = int64(r.Cur)
		l.Files = Bound{Room: int64(r.Cur) - open, Set: true,
			Name: fmt.Sprintf("left under ulimit -n (RLIMIT_NOFILE %d, %d open)", r.Cur, open)}
	}
	return l
}

// memAvailable reads MemAvailable from /proc/meminfo, in bytes.
func (s system) memAvailable() (int64, bool) {
	b, err := os.ReadFile(filepath.Join(s.proc, "meminfo"))
	if err != nil {
		return 0, false
	}
	return kbField(b, "MemAvailable:")
}

// statusField reads a field in kB (or a count) of /proc/self/status.
func (s system) statusField(key string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(s.proc, "self", "status"))
	if err != nil {
		return 0, false
	}
	return kbField(b, key+":")
}

// kbField reads "Key:   1234 kB" from b, as bytes (a count without kB as
// itself).
func kbField(b []byte, key string) (int64, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, key)
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		num, kb := strings.CutSuffix(rest, " kB")
		v, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil {
			return 0, false
		}
		if kb && key == "MemAvailable:" {
			v <<= 10
		}
		return v, true
	}
	return 0, false
}

// exemptFromNPROC reports whether the kernel lets this process past
// RLIMIT_NPROC: its real user is root, or it holds CAP_SYS_RESOURCE or
// CAP_SYS_ADMIN.
func (s system) exemptFromNPROC() bool {
	if os.Getuid() == 0 {
		return true
	}
	b, err := os.ReadFile(filepath.Join(s.proc, "self", "status"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
			return err == nil && caps&(1<<unix.CAP_SYS_ADMIN|1<<unix.CAP_SYS_RESOURCE) != 0
		}
	}
	return false
}

// userTasks counts the threads of every process whose real user is uid,
// as RLIMIT_NPROC counts them (of the processes this one can see).
func (s system) userTasks(uid int) int64 {
	ents, err := os.ReadDir(s.proc)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.proc, e.Name(), "status"))
		if err != nil {
			continue
		}
		var real, threads int64 = -1, 1
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					real, _ = strconv.ParseInt(f[0], 10, 64)
				}
			}
			if rest, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			}
		}
		if real == int64(uid) {
			n += threads
		}
	}
	return n
}

// openFiles counts this process's open descriptors.
func (s system) openFiles() int64 {
	ents, err := os.ReadDir(filepath.Join(s.proc, "self", "fd"))
	if err != nil {
		return 3
	}
	return int64(len(ents))
}
