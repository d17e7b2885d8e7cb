package isolate

import "cmp"

// evidence is what a host's pairs with the hosts not yet named say.
type evidence struct {
	pairs, bad, failed int
}

// stronger compares evidence: more of the pairs bad, then more of them
// failed (a failed pair is a fault; a pair of a loaded machine can be
// slow by chance). It returns > 0 when x is the stronger.
func (x evidence) stronger(y evidence) int {
	// Fractions compared by cross-multiplying, exactly.
	return cmp.Or(
		cmp.Compare(x.bad*y.pairs, y.bad*x.pairs),
		cmp.Compare(x.failed*y.pairs, y.failed*x.pairs))
}

// nameHosts decides which hosts are named, explaining away: the host with
// the strongest evidence is named first, then its bad pairs are taken out
// of every other host's count (they are explained by it; a good pair with
// it still says its peer is good), and the rest are judged again on the
// pairs that remain, until no host qualifies. A host qualifies when most of its
// remaining pairs are bad (more than half), or exactly half of them are
// and every one of those failed and each of their peers has weaker
// evidence than it: then the failures are better explained by it than by
// its peers. With two hosts nothing is named: the one pair cannot say
// which host is bad. It sets each host's Named, Rest and RestBad
// and returns the named hosts in the order they were named.
func nameHosts(hosts []*Host, pairs []*Pair) []*Host {
	if len(hosts) < 3 {
		for _, h := range hosts {
			h.Rest, h.RestBad = h.Pairs, h.Bad
		}
		return nil
	}
	byName := map[string]*Host{}
	for _, h := range hosts {
		byName[h.Name] = h
	}
	var named []*Host
	for {
		ev := map[string]evidence{}
		for _, p := range pairs {
			a, b := byName[p.A], byName[p.B]
			if p.Bad() && (a.Named || b.Named) {
				continue // explained by a host named before
			}
			for _, name := range []string{p.A, p.B} {
				e := ev[name]
				e.pairs++
				if p.Bad() {
					e.bad++
				}
				if p.Verdict == Failed || p.Verdict == Flaky {
					e.failed++
				}
				ev[name] = e
			}
		}
		qualifies := func(h *Host) bool {
			e := ev[h.Name]
			switch {
			case e.pairs == 0 || 2*e.bad < e.pairs:
				return false
			case 2*e.bad > e.pairs:
				return true
			case e.failed < e.bad:
				return false
			}
			// Exactly half, all failed: named only when each failed
			// pair is better explained by this host than by its peer.
			for _, p := range pairs {
				peer := p.A
				if peer == h.Name {
					peer = p.B
				}
				if (p.A != h.Name && p.B != h.Name) || byName[peer].Named || !p.Bad() {
					continue
				}
				if e.stronger(ev[peer]) <= 0 {
					return false
				}
			}
			return true
		}
		var best *Host
		for _, h := range hosts {
			if h.Named || !qualifies(h) {
				continue
			}
			if best == nil || cmp.Or(
				ev[h.Name].stronger(ev[best.Name]),
				-cmp.Compare(nanLast(h.Ratio), nanLast(best.Ratio)),
				-cmp.Compare(h.Name, best.Name)) > 0 {
				best = h
			}
		}
		if best == nil {
			for _, h := range hosts {
				if !h.Named {
					h.Rest, h.RestBad = ev[h.Name].pairs, ev[h.Name].bad
				}
			}
			return named
		}
		best.Named = true
		best.Rest, best.RestBad = ev[best.Name].pairs, ev[best.Name].bad
		named = append(named, best)
	}
}
