package world

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/listarg"
)

// GroupKinds are the communication domains --groups knows, in the order
// ranks are laid out: tp varies fastest, then cp, ep, dp and pp, as
// Megatron-LM's default order (tp-cp-ep-dp-pp) lays them out.
var GroupKinds = []string{"tp", "cp", "ep", "dp", "pp"}

// Layout splits the world into communication domains: Sizes[i] ranks per
// group of kind GroupKinds[i], 1 for a kind not given. Rank r has
// coordinate (r / stride_i) % Sizes[i] in kind i, where the stride of a
// kind is the product of the sizes of the kinds before it; a group of kind
// i is the ranks that differ from each other in coordinate i only.
type Layout struct {
	Sizes []int // by GroupKinds; nil when the world is not split
}

// ParseLayout reads --groups, "tp=4,dp=2", for a world of n ranks: the
// product of the sizes must be n.
func ParseLayout(s string, n int) (Layout, error) {
	l, _, err := ParseLayoutOf("--groups", s, n, "--ranks")
	return l, err
}

// maxGroupRanks bounds the size of one kind of group, as --ranks is
// bounded.
const maxGroupRanks = 4096

// ParseLayoutOf reads a layout given as label (a flag, or a field of a
// file) for a world of n ranks, whose size came from ranksFrom, and
// returns the kinds it names, in layout order.
func ParseLayoutOf(label, s string, n int, ranksFrom string) (Layout, []string, error) {
	l := Layout{Sizes: make([]int, len(GroupKinds))}
	for i := range l.Sizes {
		l.Sizes[i] = 1
	}
	seen := map[string]bool{}
	product := 1
	kinds, vals, err := listarg.Keys(label, s, ",", "=", strings.ToLower)
	if err != nil {
		return Layout{}, nil, err
	}
	for j, kind := range kinds {
		i := slices.Index(GroupKinds, kind)
		size, err := limits.Count(vals[j])
		switch {
		case errors.Is(err, limits.ErrRange):
			return Layout{}, nil, fmt.Errorf("%s %q: %s=%s: want 1 to %d ranks per group", label, s, kind, strings.TrimSpace(vals[j]), maxGroupRanks)
		case err != nil:
			return Layout{}, nil, fmt.Errorf("%s %q: %q is not KIND=SIZE (kinds: %s)", label, s, strings.Split(s, ",")[j], strings.Join(GroupKinds, " "))
		case i < 0:
			return Layout{}, nil, fmt.Errorf("%s %q: unknown kind %q (want %s)", label, s, kind, strings.Join(GroupKinds, " "))
		case size < 1 || size > maxGroupRanks:
			return Layout{}, nil, fmt.Errorf("%s %q: %s=%d: want 1 to %d ranks per group", label, s, kind, size, maxGroupRanks)
		}
		seen[kind] = true
		l.Sizes[i] = size
		product *= size
	}
	if product != n {
		return Layout{}, nil, fmt.Errorf("%s %q: the sizes multiply to %d, not the %d ranks of the world (%s)", label, s, product, n, ranksFrom)
	}
	var ordered []string
	for _, k := range GroupKinds {
		if seen[k] {
			ordered = append(ordered, k)
		}
	}
	return l, ordered, nil
}

// Split reports whether the layout splits the world.
func (l Layout) Split() bool { return l.Sizes != nil }

// Size returns the ranks in each group of kind, 0 for a kind it does not
// know.
func (l Layout) Size(kind string) int {
	i := slices.Index(GroupKinds, kind)
	if i < 0 || !l.Split() {
		return 0
	}
	return l.Sizes[i]
}

// Members returns the world ranks of rank's group of kind, by their rank in
// the group: rank itself is at its coordinate.
func (l Layout) Members(kind string, rank int) []int {
	i := slices.Index(GroupKinds, kind)
	stride := 1
	for _, s := range l.Sizes[:i] {
		stride *= s
	}
	size := l.Sizes[i]
	base := rank - (rank/stride%size)*stride
	out := make([]int, size)
	for c := range out {
		out[c] = base + c*stride
	}
	return out
}

// String describes the layout for the header: "tp=4 dp=2 (tp fastest)".
func (l Layout) String() string {
	var parts []string
	for i, s := range l.Sizes {
		if s > 1 {
			parts = append(parts, fmt.Sprintf("%s=%d", GroupKinds[i], s))
		}
	}
	if len(parts) == 0 {
		return "one group of every rank"
	}
	return strings.Join(parts, " ") + " (ranks laid out tp fastest, then cp, ep, dp, pp)"
}
