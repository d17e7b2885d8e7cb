package bench

import (
	"strings"
	"testing"

	_ "github.com/hccl-test/hccl-test/backends/tcp" // a tcp plan's files and tasks
	"github.com/hccl-test/hccl-test/internal/syslimits"
)

// TestCheckLimits: a plan that needs more than a limit of the system leaves
// is refused naming the limit; a rank process that a parent started counts
// only its own threads and files.
func TestCheckLimits(t *testing.T) {
	bound := func(room int64, name string) syslimits.Bound {
		return syslimits.Bound{Room: room, Set: true, Name: name}
	}
	tests := []struct {
		name string
		edit func(p *Plan)
		want string // "" for accepted
	}{
		{"no limits", func(p *Plan) {}, ""},
		{"a memory cgroup", func(p *Plan) {
			p.MaxBytes, p.MemLimit = 256<<20, 2<<30
			p.Limits.Memory = bound(2<<30, "left under the memory cgroup /job (memory.max 2.0GiB, 0B in use)")
		}, "more than the 2.0GiB left under the memory cgroup /job"},
		{"address space", func(p *Plan) {
			p.MaxBytes = 256 << 20
			p.Limits.AddressSpace = bound(6<<30, "left under ulimit -v (RLIMIT_AS 7.6GiB, 1.6GiB held)")
		}, "of address space (8 ranks on this machine), more than the 6.0GiB left under ulimit -v"},
		{"address space of a tcp process, its share", func(p *Plan) {
			p.Backend, p.MaxBytes = "tcp", 256<<20
			p.Limits.AddressSpace = bound(2<<30, "RLIMIT_AS")
		}, ""},
		{"address space of the tcp run, in one process", func(p *Plan) {
			p.MaxBytes = 256 << 20
			p.Limits.AddressSpace = bound(2<<30, "RLIMIT_AS")
		}, "of address space (8 ranks on this machine), more than the 2.0GiB RLIMIT_AS"},
		{"address space that fits", func(p *Plan) {
			p.MaxBytes = 1 << 20
			p.Limits.AddressSpace = bound(6<<30, "RLIMIT_AS")
		}, ""},
		{"tasks", func(p *Plan) { p.Limits.Tasks = bound(6, "left under ulimit -u") }, "threads in one process, more than the 6 left under ulimit -u"},
		{"tasks of tcp children", func(p *Plan) {
			p.Backend, p.Limits.Tasks = "tcp", bound(40, "left under ulimit -u")
		}, "threads in 8 processes, more than the 40"},
		{"tasks of one launched rank", func(p *Plan) {
			p.Backend, p.LaunchedRank, p.HostedRanks, p.Limits.Tasks = "tcp", 3, 1, bound(40, "left under ulimit -u")
		}, ""},
		{"files of a tcp parent", func(p *Plan) {
			p.Backend, p.Ranks, p.Limits.Files = "tcp", 32, bound(54, "left under ulimit -n")
		}, "files in one process, more than the 54 left under ulimit -n"},
		{"files in one process", func(p *Plan) { p.Ranks, p.Limits.Files = 32, bound(54, "left under ulimit -n") }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			p.Ranks, p.MinBytes, p.MaxBytes = 8, 1024, 1024
			tc.edit(&p)
			err := p.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
