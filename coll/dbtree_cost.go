package coll

// The double binary tree's cost follows its steps rather than adding them
// up. Its lockstep pipeline is far from uniform: a small call is one
// segment that climbs L levels and comes back down, most ranks idle at
// most steps, and pays about 2L latencies, where charging every one of its
// 2L-1+K steps a full step of eight messages overstated it fourfold; a
// large one runs at the pace of the heaviest cycle of dependencies through
// both trees, which depends on how the trees fall on the servers (on two
// levels no closed form follows). dbtreeFollow keeps every rank's clock
// through the steps, as the simulated backend does:
//
//   - a step's sends are handed to the rank's ports a gap apart from when
//     the step begins, and queue behind what the port is still sending; a
//     message arrives its link's latency after it has left the port;
//   - the receives are done one after another, each once its message has
//     arrived, the ones from the children followed by their reduction;
//     a rank's ingress port of each level takes the bytes of the
//     messages it receives on it back to back, so a message arrives no
//     earlier than a latency after that port's account (the time it
//     would have taken all of them so far) has moved by its bytes, as
//     a node that two parents or two children feed at once receives;
//   - the step ends when the receives are done and the sends have left.
//
// Where the receiver reads the sender's buffer (Model.Fused: shm) there
// are no ports: a receiver moves each segment itself, reducing it on the
// way, one after another, and a sender's step ends when its receivers have
// taken its segments.
//
// On two levels each message takes the link between its ranks' servers.
// It takes O(n(K+L)) for n ranks (Choose remembers its predictions, so
// that is paid once per size and model).

// dbtreeShape returns K, the segments per half of an m-byte buffer that
// goes up the trees (up), down them (down) or both (dbtreeSegments), σ,
// the bytes of a segment, and L = 1 + ⌈log2(n-1)⌉, the depth and the
// root's height in the deeper tree (B).
func dbtreeShape(n int, m float64, up, down bool) (k, sigma, l float64) {
	k = float64(dbtreeSegments(n, int(m/2), up, down))
	return k, m / 2 / k, 1 + log2Ceil(n-1)
}

// dbtreeAllReduceCost is dbtreeAllReduce's time: up both trees, then down.
func dbtreeAllReduceCost(n int, b float64, m Model) float64 {
	return dbtreeFollow(n, b, m, true, true)
}

// dbtreeBroadcastCost is dbtreeBroadcast's time: down both trees.
func dbtreeBroadcastCost(n int, b float64, m Model) float64 {
	return dbtreeFollow(n, b, m, false, true)
}

// dbtreeReduceCost is dbtreeReduce's time: up both trees.
func dbtreeReduceCost(n int, b float64, m Model) float64 {
	return dbtreeFollow(n, b, m, true, false)
}

// dbPlace is a node's place in one tree, as newDBHalf finds it: its
// parent (-1 at the root) and its index among the parent's children
// (slot), its children in the order they fold in (-1 for none), its
// height and its depth.
type dbPlace struct {
	parent, slot  int
	kids          [2]int
	height, depth int
}

// dbPlaces returns every node's place in tree t.
func dbPlaces(t dbTree) []dbPlace {
	ps := make([]dbPlace, t.n)
	for v := range ps {
		h := newDBHalf(t, v, 0, 0, 1)
		p := dbPlace{parent: h.parent, kids: [2]int{-1, -1}, height: h.height, depth: h.depth}
		copy(p.kids[:], h.kids)
		ps[v] = p
	}
	for _, p := range ps {
		for i, k := range p.kids {
			if k >= 0 {
				ps[k].slot = i
			}
		}
	}
	return ps
}

// dbtreeFollow is the time of a double-binary-tree call of b bytes on n
// ranks under m, rooted at rank 0, that reduces up the trees (up),
// broadcasts down them (down), or both, found by following every rank's
// clock (see the top of this file).
func dbtreeFollow(n int, b float64, m Model, up, down bool) float64 {
	if n < 2 {
		return 0
	}
	k, sigma, _ := dbtreeShape(n, b, up, down)
	parts := int(k)
	_, p, two := m.split(n)
	levels := [2]Model{m, m}
	if two {
		levels = [2]Model{m.intraLevel(), m.interLevel()}
	}
	gap := m.gap()
	trees := dbTreesOf(n)
	var downAt [2]int
	last := 0
	for h := range trees {
		t := dbTree{n: n, off: h}
		downAt[h] = -1
		if down {
			downAt[h] = 0
			if up {
				downAt[h] = t.height(0)
			}
		}
		for _, pl := range trees[h] {
			end := 0
			if up {
				end = pl.height
			}
			if down {
				end = max(end, downAt[h]+pl.depth)
			}
			last = max(last, parts-1+end)
		}
	}
	has := func(s int) bool { return s >= 0 && s < parts }

	clock, issue, left := make([]float64, n), make([]float64, n), make([]float64, n)
	busy, in := make([][2]float64, n), make([][2]float64, n)
	// arrive[v][3h+i] is when the segment v receives in tree h at this
	// step arrives: from its i-th child (i < 2) or from its parent (i = 2).
	arrive := make([][6]float64, n)
	// On two levels a broadcast's root copies each segment it sent into
	// its receive buffer, as the two-level costs of the other rooted
	// algorithms count its copy (tree.go, chain_cost.go).
	rootCopies := two && down && !up
	level := func(u, w int) int {
		if two && u/p != w/p {
			return 1
		}
		return 0
	}
	// send books a segment from u to w and returns when it arrives.
	send := func(u, w int) float64 {
		l := level(u, w)
		issued := max(clock[u], issue[u])
		issue[u] = issued + gap
		if m.Fused {
			// The receiver moves it (receive): it is there to take a
			// latency after it was posted.
			return issued + levels[l].Alpha
		}
		out := max(issued, busy[u][l]) + sigma*levels[l].Beta
		busy[u][l] = out
		if m.SenderMoves {
			issue[u] = out + gap
		}
		left[u] = max(left[u], out)
		return out + levels[l].Alpha
	}
	// receive takes into v the segment from u that arrives at at, reducing
	// it or not. Where the receiver reads the sender's buffer (Fused), it
	// moves the bytes itself, one segment after another, and the sender's
	// step waits until it has.
	receive := func(v, u int, at float64, reduce bool) {
		l := level(u, v)
		move := sigma * levels[l].Beta
		if !m.Fused {
			in[v][l] += move
			at = max(at, in[v][l]+levels[l].Alpha)
		}
		switch {
		case m.Fused && reduce:
			clock[v] = max(clock[v], at) + m.received(move, sigma)
		case m.Fused:
			clock[v] = max(clock[v], at) + move
		case reduce:
			clock[v] = max(clock[v], at) + m.received(move, sigma) - move
		default:
			clock[v] = max(clock[v], at)
		}
		if m.Fused {
			left[u] = max(left[u], clock[v])
		}
	}
	for t := 0; t <= last; t++ {
		for v := range n {
			left[v] = 0
		}
		for v := range n {
			for h := range trees {
				pl := &trees[h][v]
				if s := t - pl.height; up && pl.parent >= 0 && has(s) {
					arrive[pl.parent][3*h+pl.slot] = send(v, pl.parent)
				}
				if s := t - downAt[h] - pl.depth; down && has(s) {
					for _, kid := range pl.kids {
						if kid >= 0 {
							arrive[kid][3*h+2] = send(v, kid)
						}
					}
				}
			}
			if v == 0 && rootCopies && has(t) {
				clock[0] += 2 * m.copy(sigma)
			}
		}
		for v := range n {
			for h := range trees {
				pl := &trees[h][v]
				for i, kid := range pl.kids {
					if up && kid >= 0 && has(t-trees[h][kid].height) {
						receive(v, kid, arrive[v][3*h+i], true)
					}
				}
				if s := t - downAt[h] - pl.depth + 1; down && pl.parent >= 0 && has(s) {
					receive(v, pl.parent, arrive[v][3*h+2], false)
				}
			}
		}
		for v := range n {
			clock[v] = max(clock[v], left[v])
		}
	}
	end := 0.0
	for _, c := range clock {
		end = max(end, c)
	}
	return end
}
