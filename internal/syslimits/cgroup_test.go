package syslimits

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryCgroups reads fake /proc and /sys trees (testdata): the
// tightest limit of the process's cgroup and its ancestors, v1 and v2,
// with the inactive page cache left out of the usage.
func TestMemoryCgroups(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		tree string
		room int64  // 0: no limit
		name string // in the bound's name
	}{
		// user.slice: memory.max 2 GiB, 1 GiB in use of which 256 MiB
		// inactive cache; its child job: memory.high 3 GiB, 100 MiB.
		{"v2", 2*gib - (gib - 256<<20), "/user.slice (memory.max 2.0GiB, 768.0MiB in use)"},
		// a/b: 2 GiB, 1 GiB in use; its parent a: 4 GiB, 3.75 GiB in use
		// of which 512 MiB inactive cache; the hierarchy's root: none.
		{"v1", 4*gib - (3*gib + 768<<20 - 512<<20), "/a (memory.limit_in_bytes 4.0GiB, 3.2GiB in use)"},
		// A mount whose root is /outer: the process's /outer/job reads
		// job, then the mount point, /outer itself (1 GiB).
		{"nslimit", gib, "/outer (memory.max 1.0GiB, 0B in use)"},
		{"none", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.tree, func(t *testing.T) {
			dir := filepath.Join("testdata", tc.tree)
			s := system{proc: filepath.Join(dir, "proc"), root: dir}
			var got Bound
			for _, b := range s.memoryCgroups() {
				got = got.Tighter(b)
			}
			if tc.room == 0 {
				if got.Set {
					t.Fatalf("got %+v, want no limit", got)
				}
				return
			}
			if !got.Set || got.Room != tc.room || !strings.Contains(got.Name, tc.name) {
				t.Fatalf("got %+v, want room %d named %q", got, tc.room, tc.name)
			}
		})
	}
}

// TestMountRelative: a cgroup path is read below the mount's root.
func TestMountRelative(t *testing.T) {
	tests := []struct {
		p, root, want string
		ok            bool
	}{
		{"/a/b", "/", "/a/b", true},
		{"/a/b", "/a", "/b", true},
		{"/a", "/a", "/", true},
		{"/ab", "/a", "", false},
	}
	for _, tc := range tests {
		got, ok := within(tc.p, tc.root)
		if got != tc.want || ok != tc.ok {
			t.Errorf("within(%q, %q) = %q, %v; want %q, %v", tc.p, tc.root, got, ok, tc.want, tc.ok)
		}
	}
	if got := unescape(`/sys/fs/cgroup/my\040group`); got != "/sys/fs/cgroup/my group" {
		t.Errorf("unescape: %q", got)
	}
}
