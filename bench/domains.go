package bench

import "slices"

// MaxBuckets bounds --fusion's bucket counts.
const MaxBuckets = 4096

// groupList returns the domains the sweep runs in: Groups, or the whole
// world ("").
func (p *Plan) groupList() []string {
	if len(p.Groups) == 0 {
		return []string{""}
	}
	return p.Groups
}

// GroupSize returns the ranks in each group of domain kind ("" for the
// whole world).
func (p *Plan) GroupSize(kind string) int {
	if kind == "" || !p.Layout.Split() {
		return p.Ranks
	}
	return p.Layout.Size(kind)
}

// minGroupSize is the smallest group the sweep runs in: roots must be
// ranks of every one of them.
func (p *Plan) minGroupSize() int {
	n := p.Ranks
	for _, g := range p.groupList() {
		if s := p.GroupSize(g); s > 0 { // 0: an unknown kind, refused later
			n = min(n, s)
		}
	}
	return n
}

// bucketList returns the bucket counts each size is measured with: the
// Fusion list with 1 (the fused collective) first, or just 1.
func (p *Plan) bucketList() []int {
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
