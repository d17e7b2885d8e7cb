package isolate

import (
	"fmt"
	"slices"
)

// A live search measures in slots: the rounds of Rounds, one slot each,
// then the levels of Halvings, one slot each. Every rank knows the whole
// plan from the world's hosts, so that no rank waits for a word from
// another to know what comes next: a host that goes silent costs its
// peers the measurements with it, never the search.

// measurement is one measurement of the plan: a pair of hosts (rail by
// rail) or a group of hosts (all their ranks in one allreduce).
type measurement struct {
	Slot  int   // the slot it runs in
	Level int   // 0 for a pair; 1 for halves, 2 for quarters, ...
	Hosts []int // the pair's two hosts (a < b), or the group's hosts
	// Rails are the rank pairs of a pair of hosts, local rank i of one
	// against local rank i of the other; Ranks the group's ranks, host by
	// host.
	Rails [][2]int
	Ranks []int
}

// plan is the search over a world's hosts.
type plan struct {
	hosts   []string // by host index
	hostOf  []int    // by rank
	ranksOf [][]int  // by host index: its ranks, in rank order
	slots   int
	// pairSlots is how many of the slots are rounds of pairs; the
	// levels of groups follow.
	pairSlots int
	meas      []measurement // slot by slot
}

// newPlan lays out the search over a world whose rank r sits on host
// hosts[r]: hosts in the order of their first rank.
func newPlan(hosts []string) (*plan, error) {
	p := &plan{hostOf: make([]int, len(hosts))}
	at := map[string]int{}
	for r, h := range hosts {
		i, ok := at[h]
		if !ok {
			i = len(p.hosts)
			at[h] = i
			p.hosts = append(p.hosts, h)
			p.ranksOf = append(p.ranksOf, nil)
		}
		p.hostOf[r] = i
		p.ranksOf[i] = append(p.ranksOf[i], r)
	}
	if len(p.hosts) < 2 {
		return nil, fmt.Errorf("the %d ranks are all on host %s: a search needs ranks on 2 hosts or more (or --per-host to count ranks as hosts)", len(hosts), hosts[0])
	}
	for _, round := range Rounds(len(p.hosts)) {
		for _, pr := range round {
			m := measurement{Slot: p.slots, Hosts: []int{pr[0], pr[1]}}
			a, b := p.ranksOf[pr[0]], p.ranksOf[pr[1]]
			for i := range min(len(a), len(b)) {
				m.Rails = append(m.Rails, [2]int{a[i], b[i]})
			}
			p.meas = append(p.meas, m)
		}
		p.slots++
	}
	p.pairSlots = p.slots
	for l, level := range Halvings(len(p.hosts)) {
		for _, g := range level {
			m := measurement{Slot: p.slots, Level: l + 1, Hosts: slices.Clone(g)}
			for _, h := range g {
				m.Ranks = append(m.Ranks, p.ranksOf[h]...)
			}
			p.meas = append(p.meas, m)
		}
		p.slots++
	}
	return p, nil
}

// part is what rank does in measurement m: its peers' world ranks (the
// rail peer, or the group's ranks) and its rail, -1 for a group; ok false
// when it sits m out.
func (m *measurement) part(rank int) (peers []int, rail int, ok bool) {
	for i, r := range m.Rails {
		switch rank {
		case r[0]:
			return []int{r[0], r[1]}, i, true
		case r[1]:
			return []int{r[0], r[1]}, i, true
		}
	}
	if slices.Contains(m.Ranks, rank) {
		return m.Ranks, -1, true
	}
	return nil, 0, false
}

// hostsByPerHost names the hosts of a world of n ranks counted per ranks
// to a host, host by host: host0, host1, ...
func hostsByPerHost(n, per int) []string {
	out := make([]string, n)
	for r := range n {
		out[r] = fmt.Sprintf("host%d", r/per)
	}
	return out
}
