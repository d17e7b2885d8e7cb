package isolate

// Rounds returns a round-robin tournament over hosts 0..n-1 (the circle
// method): rounds of disjoint pairs in which every pair meets exactly
// once, n-1 rounds for an even n and n for an odd n (where each round one
// host sits out). A live search measures a round's pairs at once, so that
// no host is in two measurements at a time. Nil for n < 2.
func Rounds(n int) [][][2]int {
	if n < 2 {
		return nil
	}
	m := n
	if m%2 == 1 {
		m++ // a bye: pairing with host n means sitting the round out
	}
	// Host 0 stays put; the others rotate one place a round.
	ring := make([]int, m)
	for i := range ring {
		ring[i] = i
	}
	rounds := make([][][2]int, 0, m-1)
	for range m - 1 {
		var round [][2]int
		for i := range m / 2 {
			a, b := ring[i], ring[m-1-i]
			if a >= n || b >= n {
				continue
			}
			round = append(round, [2]int{min(a, b), max(a, b)})
		}
		rounds = append(rounds, round)
		last := ring[m-1]
		copy(ring[2:], ring[1:m-1])
		ring[1] = last
	}
	return rounds
}

// Halvings returns the groups of hosts 0..n-1 that a bisection measures
// together, level by level: the two halves, then the four quarters, and so
// on while a group has at least two hosts (an odd count's extra host goes
// to the first part). A group slow only at one level, with its pairs
// good, is slow together: a switch or a route shared by its hosts.
func Halvings(n int) [][][]int {
	var levels [][][]int
	groups := [][]int{make([]int, n)}
	for i := range n {
		groups[0][i] = i
	}
	for {
		var next [][]int
		for _, g := range groups {
			if len(g) < 4 { // halves of fewer than two hosts measure nothing
				continue
			}
			h := (len(g) + 1) / 2
			next = append(next, g[:h], g[h:])
		}
		if len(next) == 0 {
			return levels
		}
		levels = append(levels, next)
		groups = next
	}
}
