package syslimits

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// system is where the files the limits are read from live: the live
// system, or a fake tree in a test.
type system struct {
	proc string // /proc
	root string // the file system's root, under which mount points are
}

// file returns the contents of a file of the fake or live system; name is
// an absolute path under root.
func (s system) file(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.root, filepath.FromSlash(name)))
}

// mount is one cgroup hierarchy mounted: v2, or a v1 one with the memory
// controller.
type mount struct {
	point string // where it is mounted, e.g. /sys/fs/cgroup/memory
	root  string // the cgroup at the mount point, usually /
	v2    bool
}

// memoryCgroups returns the memory limits of every cgroup the process is
// in, its own and each ancestor's, each as a Bound; none when the process
// is in no memory cgroup with a limit.
func (s system) memoryCgroups() []Bound {
	mounts := s.cgroupMounts()
	own, err := os.ReadFile(filepath.Join(s.proc, "self", "cgroup"))
	if err != nil {
		return nil
	}
	var out []Bound
	for _, line := range strings.Split(string(own), "\n") {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		v2 := f[0] == "0" && f[1] == ""
		if !v2 && !hasWord(f[1], "memory") {
			continue
		}
		for _, m := range mounts {
			if m.v2 != v2 {
				continue
			}
			rel, ok := within(f[2], m.root)
			if !ok {
				continue
			}
			out = append(out, s.ancestry(m, rel)...)
		}
	}
	return out
}

// ancestry reads the limit of the cgroup rel (a path below m's root) and of
// each ancestor up to the mount point.
func (s system) ancestry(m mount, rel string) []Bound {
	var out []Bound
	for {
		dir := path.Join(m.point, rel)
		if b, ok := s.cgroupLimit(dir, path.Join(m.root, rel), m.v2); ok {
			out = append(out, b)
		}
		if rel == "/" || rel == "." || rel == "" {
			return out
		}
		rel = path.Dir(rel)
	}
}

// cgroupLimit reads one cgroup's limit and usage from dir; name is its path
// as /proc/self/cgroup gives it. The usage leaves out the inactive page
// cache, which the kernel reclaims before it kills.
func (s system) cgroupLimit(dir, name string, v2 bool) (Bound, bool) {
	limitFiles, usageFile, inactive := []string{"memory.limit_in_bytes"}, "memory.usage_in_bytes", "total_inactive_file"
	if v2 {
		limitFiles, usageFile, inactive = []string{"memory.max", "memory.high"}, "memory.current", "inactive_file"
	}
	var limit uint64
	var which string
	for _, f := range limitFiles {
		v, ok := s.number(path.Join(dir, f))
		if ok && !unlimited(v) && (which == "" || v < limit) {
			limit, which = v, f
		}
	}
	if which == "" {
		return Bound{}, false
	}
	usage, _ := s.number(path.Join(dir, usageFile))
	if st, err := s.file(path.Join(dir, "memory.stat")); err == nil {
		if v, ok := statField(st, inactive); ok && v <= usage {
			usage -= v
		}
	}
	room := int64(limit) - int64(min(usage, limit))
	return Bound{Room: room, Set: true,
		Name: "left under the memory cgroup " + name + " (" + which + " " + human(int64(limit)) + ", " + human(int64(usage)) + " in use)"}, true
}

// number reads a file holding one number ("max" reads as none).
func (s system) number(name string) (uint64, bool) {
	b, err := s.file(name)
	if err != nil {
		return 0, false
	}
	t := strings.TrimSpace(string(b))
	if t == "max" {
		return 1<<63 - 1, true
	}
	v, err := strconv.ParseUint(t, 10, 64)
	return v, err == nil
}

// cgroupMounts lists the cgroup v2 hierarchies and the v1 ones with the
// memory controller, from /proc/self/mountinfo.
func (s system) cgroupMounts() []mount {
	b, err := os.ReadFile(filepath.Join(s.proc, "self", "mountinfo"))
	if err != nil {
		return nil
	}
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// 36 35 98:0 /root /mount/point rw,... [optional fields] - fstype source super-options
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		m := mount{point: unescape(f[4]), root: unescape(f[3])}
		switch {
		case g[0] == "cgroup2":
			m.v2 = true
		case g[0] == "cgroup" && len(g) >= 3 && hasWord(g[2], "memory"):
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// within returns p relative to root ("/" for root itself), if p is root
// or below it.
func within(p, root string) (string, bool) {
	p, root = path.Clean(p), path.Clean(root)
	if root == "/" {
		return p, true
	}
	if p == root {
		return "/", true
	}
	rest, ok := strings.CutPrefix(p, root+"/")
	if !ok {
		return "", false
	}
	return "/" + rest, true
}

// hasWord reports whether the comma-separated list holds w.
func hasWord(list, w string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == w {
			return true
		}
	}
	return false
}

// statField reads the value of key from a memory.stat file.
func statField(b []byte, key string) (uint64, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
