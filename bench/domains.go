package bench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/kit"
)

// MaxBuckets bounds --fusion's bucket counts.
const MaxBuckets = 4096

// groupList returns the domains the sweep runs in: Groups, or the whole
// world ("").
func (p Plan) groupList() []string {
	if len(p.Groups) == 0 {
		return []string{""}
	}
	return p.Groups
}

// GroupSize returns the ranks in each group of domain kind ("" for the
// whole world).
func (p Plan) GroupSize(kind string) int {
	if kind == "" || !p.Layout.Split() {
		return p.Ranks
	}
	return p.Layout.Size(kind)
}

// minGroupSize is the smallest group the sweep runs in: roots must be
// ranks of every one of them.
func (p Plan) minGroupSize() int {
	n := p.Ranks
	for _, g := range p.groupList() {
		if s := p.GroupSize(g); s > 0 { // 0: an unknown kind, refused later
			n = min(n, s)
		}
	}
	return n
}

// groupNote explains a bound that groups set, for errors.
func (p Plan) groupNote() string {
	if len(p.Groups) == 0 {
		return ""
	}
	return fmt.Sprintf(" (a rank of the group, --group %s)", strings.Join(p.Groups, ","))
}

// bucketList returns the bucket counts each size is measured with: the
// Fusion list with 1 (the fused collective) first, or just 1.
func (p Plan) bucketList() []int {
	if len(p.Fusion) == 0 {
		return []int{1}
	}
	out := []int{1}
	for _, b := range p.Fusion {
		if !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// validateDomains checks --groups, --group, --fusion and --overlap.
func (p Plan) validateDomains() error {
	if len(p.Groups) > 0 && !p.Layout.Split() {
		return fmt.Errorf("--group %s: needs --groups to say how the world splits (e.g. --groups tp=%d)", strings.Join(p.Groups, ","), p.Ranks)
	}
	for i, g := range p.Groups {
		switch {
		case !slices.Contains(kit.GroupKinds, g):
			return fmt.Errorf("--group %q: unknown kind (want %s)", g, strings.Join(kit.GroupKinds, " "))
		case slices.Contains(p.Groups[:i], g):
			return fmt.Errorf("--group %s: given twice", g)
		}
	}
	if len(p.Groups) > 0 {
		switch {
		case p.Retry > 0:
			return fmt.Errorf("--retry with --group: re-execution covers the whole world only")
		case p.asks(coll.Native):
			return fmt.Errorf("--algo native with --group: MPI's collectives run on the whole world only")
		}
	}
	for _, b := range p.Fusion {
		if b < 1 || b > MaxBuckets {
			return fmt.Errorf("--fusion %d: want bucket counts from 1 to %d", b, MaxBuckets)
		}
	}
	if p.Overlap < 0 || p.Overlap > time.Minute {
		return fmt.Errorf("--overlap %v: want a duration from 0 to 1m, or auto", p.Overlap)
	}
	return p.validateFusion()
}
