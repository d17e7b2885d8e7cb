package coll

import (
	"fmt"

	"github.com/hccl-test/hccl-test/backends/group"
)

// The two levels of a world that spans servers, as HCCL's level 0 (inside
// a server) and level 1 (between servers) and NCCL's intra- and inter-node
// rings: ranks are laid out server by server, so rank r sits on server
// r/P as local rank r%P, for P ranks per server and S = n/P servers.
//
// A Comm with a topology builds, on first use by a hierarchical algorithm,
// two sub-communicators over backends/group: the intra-server one (the P
// ranks of its server, numbered by local rank) and the inter-server one
// (the S ranks with its local rank, one per server, numbered by server).
//
// Call tagging. A tagging transport marks every message with the call
// that BeginCall announced last, and the tcp backend's reader rejects a
// frame whose call number differs from the receive's. The sub-Comms never
// announce calls of their own: hier runs the levels' algorithms directly
// (their registered run functions, not Run), so every message of every
// level carries the parent's call number and signature, which both ends of
// every link agree on. Two ranks share at most one of the two groups (the
// same server and the same local rank make the same rank), and within a
// group both ends make the same steps in the same order, so FIFO matching
// pairs each message with its own receive. The parent's count of calls is
// untouched (the sub-Comms' stays at zero), the retry machinery's watch on
// the parent's call number covers the levels, and so does fault
// injection, which keys on it too.

// topology is how a Comm's ranks sit on servers (SetTopology), with the
// sub-communicators of its two levels once built.
type topology struct {
	perServer    int   // ranks per server; 0 when the world is one server
	intra, inter *Comm // built by levels on first use
}

// SetTopology lays the world out on servers of perServer consecutive ranks
// each: rank r is on server r/perServer as local rank r%perServer. 0, or
// the world's size, means one server (no topology). perServer must divide
// the world's size. Every rank of a world must set the same topology,
// before the calls it applies to. It also sets the model's PerServer, so
// that auto weighs hier against the others.
func (c *Comm) SetTopology(perServer int) error {
	switch {
	case perServer < 0:
		return fmt.Errorf("rank %d: topology: %d ranks per server", c.rank, perServer)
	case perServer == c.size:
		perServer = 0
	case perServer > 0 && c.size%perServer != 0:
		return fmt.Errorf("rank %d: topology: %d ranks per server do not divide a world of %d", c.rank, perServer, c.size)
	}
	if perServer != c.topo.perServer {
		c.topo = topology{perServer: perServer} // levels rebuilt on next use
	}
	m := c.model
	m.PerServer = perServer
	c.setModel(m)
	return nil
}

// Topology returns the number of servers and of ranks per server: 1 and
// the world's size when no topology is set.
func (c *Comm) Topology() (servers, perServer int) {
	p := c.topo.perServer
	if p == 0 {
		p = c.size
	}
	return c.size / p, p
}

// levels returns the intra-server and inter-server sub-communicators of
// this rank, building them on first use. With one server the intra one
// spans the world and the inter one is this rank alone; with one rank per
// server it is the other way round. Their models are refreshed from the
// Comm's at every use: each level's own constants, one level each.
func (c *Comm) levels() (intra, inter *Comm, err error) {
	if c.topo.intra == nil {
		servers, p := c.Topology()
		server, local := c.rank/p, c.rank%p
		intraMembers := make([]int, p)
		for j := range intraMembers {
			intraMembers[j] = server*p + j
		}
		interMembers := make([]int, servers)
		for s := range interMembers {
			interMembers[s] = s*p + local
		}
		if intra, err = c.subComm(intraMembers); err != nil {
			return nil, nil, fmt.Errorf("intra-server group of rank %d: %w", c.rank, err)
		}
		if inter, err = c.subComm(interMembers); err != nil {
			return nil, nil, fmt.Errorf("inter-server group of rank %d: %w", c.rank, err)
		}
		c.topo.intra, c.topo.inter = intra, inter
	}
	c.topo.intra.setModel(c.model.intraLevel())
	c.topo.inter.setModel(c.model.interLevel())
	return c.topo.intra, c.topo.inter, nil
}

// subComm returns a Comm of the group of world ranks members, whose
// messages travel on c's transport as steps of c's calls.
func (c *Comm) subComm(members []int) (*Comm, error) {
	t, err := group.New(c.t, members)
	if err != nil {
		return nil, err
	}
	sub := &Comm{t: t, rank: t.Rank(), size: t.Size(), model: c.model, parent: c}
	sub.findClock()
	return sub, nil
}

// top returns the top-level Comm that c's messages belong to: c itself,
// or the Comm whose level c is.
func (c *Comm) top() *Comm {
	for c.parent != nil {
		c = c.parent
	}
	return c
}

// split returns the servers and ranks per server of m's second level for
// a world of n ranks, and whether there are two levels at all: PerServer
// must be at least 2, below n and a divisor of n.
func (m Model) split(n int) (servers, perServer int, ok bool) {
	p := m.PerServer
	if p < 2 || p >= n || n%p != 0 {
		return 1, n, false
	}
	return n / p, p, true
}

// intraLevel returns the one-level model of the links inside a server.
func (m Model) intraLevel() Model {
	m.PerServer, m.InterAlpha, m.InterBeta, m.InterShared = 0, 0, 0, false
	return m
}

// interLevel returns the one-level model of the links between servers
// while every rank of a server sends to other servers at once, as in
// hier's level between servers, multiring's steps, a direct exchange, or
// rd's steps across servers: InterAlpha and InterBeta in place of Alpha
// and Beta where they are set, Beta times PerServer where the ranks share
// their server's link (InterShared).
func (m Model) interLevel() Model {
	return m.crossing(max(m.PerServer, 1))
}

// crossing returns the one-level model of the links between servers
// while k ranks of each server send to other servers at once (a ring laid
// out server by server crosses at one): with InterShared each gets 1/k of
// the server's link.
func (m Model) crossing(k int) Model {
	if m.InterAlpha > 0 {
		m.Alpha = m.InterAlpha
	}
	if m.InterBeta > 0 {
		m.Beta = m.InterBeta
	}
	if m.InterShared && k > 1 {
		m.Beta *= float64(k)
	}
	return m.intraLevel()
}

// flat returns the one-level model that an algorithm blind to the topology
// is costed with on n ranks: m itself, bit for bit, when m has one level
// or all n ranks fit on one server; otherwise the slower of the two links
// for every step. A ring laid out server by server crosses servers, and
// every rank waits on its slowest step, so the bound is simple and
// conservative; it is loose for the steps of rhd or the trees that stay
// inside a server, which it does not tell apart. Such a ring crosses at
// one rank a server, so a link that the server's ranks share
// (InterShared) is that rank's alone.
func (m Model) flat(n int) Model {
	if m.PerServer <= 0 || m.PerServer >= n {
		return m
	}
	inter := m.crossing(1)
	m = m.intraLevel()
	m.Alpha, m.Beta = max(m.Alpha, inter.Alpha), max(m.Beta, inter.Beta)
	return m
}

// level returns the one-level model of the link between ranks at distance
// d.
func (m Model) level(d int) Model {
	if d < m.PerServer {
		return m.intraLevel()
	}
	return m.interLevel()
}
