package world

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/listarg"
)

// Topology is how the ranks sit on servers (--topology): PerServer
// consecutive ranks on each of Servers servers, with a fast link inside a
// server and a slower one between servers. The zero value is one level:
// every rank behind the same link.
type Topology struct {
	Servers, PerServer int
}

// ParseTopology reads --topology for a world of n ranks:
// "servers=S,per-server=P", or either one alone (the other follows from n).
func ParseTopology(s string, n int) (Topology, error) {
	var t Topology
	canon := func(k string) string {
		k = strings.ToLower(k)
		if k == "per_server" || k == "perserver" {
			return "per-server"
		}
		return k
	}
	keys, vals, err := listarg.Keys("--topology", s, ",", "=", canon)
	if err != nil {
		return Topology{}, err
	}
	for i, key := range keys {
		item := strings.TrimSpace(strings.Split(s, ",")[i])
		v, err := limits.Count(vals[i])
		// Neither count can pass the world's ranks, which is the limit to
		// name (a number past what a count holds is past it too).
		switch {
		case errors.Is(err, limits.ErrRange) || err == nil && v > n:
			return Topology{}, fmt.Errorf("--topology %q: %q: want 1 to %d, the world's ranks", s, item, n)
		case err != nil || v < 1:
			return Topology{}, fmt.Errorf("--topology %q: %q is not servers=S or per-server=P with a positive number", s, item)
		}
		switch key {
		case "servers":
			t.Servers = v
		case "per-server":
			t.PerServer = v
		default:
			return Topology{}, fmt.Errorf("--topology %q: unknown key %q (want servers and per-server)", s, key)
		}
	}
	switch {
	case t.Servers == 0 && n%t.PerServer == 0:
		t.Servers = n / t.PerServer
	case t.PerServer == 0 && n%t.Servers == 0:
		t.PerServer = n / t.Servers
	}
	if t.Servers*t.PerServer != n {
		return Topology{}, fmt.Errorf("--topology %q: servers x per-server must be the world's %d ranks (--ranks)", s, n)
	}
	return t, nil
}

// TwoLevel reports whether the topology has more than one server.
func (t Topology) TwoLevel() bool { return t.Servers > 1 }

// Spans reports whether a group of these world ranks Crosses servers.
func (t Topology) Spans(members []int) bool {
	if !t.TwoLevel() || len(members) == 0 {
		return false
	}
	first := members[0] / t.PerServer
	for _, m := range members[1:] {
		if m/t.PerServer != first {
			return true
		}
	}
	return false
}

// String describes the topology for the header.
func (t Topology) String() string {
	return fmt.Sprintf("%d servers x %d ranks (ranks numbered server by server)", t.Servers, t.PerServer)
}

// Crosses reports whether some group of domain kind ("" for the world) of
// layout l over n ranks spans servers under t.
func (t Topology) Crosses(l Layout, n int, kind string) bool {
	if !t.TwoLevel() {
		return false
	}
	if kind == "" || !l.Split() {
		return true
	}
	for r := range n {
		if t.Spans(l.Members(kind, r)) {
			return true
		}
	}
	return false
}

// DomainModel returns the model that auto costs the calls of domain kind
// ("" for the world) with, from the world's model m. The world's Comm
// knows the servers (SetTopology) and costs each level with its own link;
// a group's Comm does not, so a domain whose groups all sit inside a
// server is costed on the link inside one, and a domain with a group that
// spans servers (spans) on the slower link for every step: the flat bound,
// exact for groups of one rank per server.
func DomainModel(m coll.Model, kind string, spans bool) coll.Model {
	if kind == "" || m.PerServer <= 0 {
		return m
	}
	if spans {
		m.Alpha, m.Beta = max(m.Alpha, m.InterAlpha), max(m.Beta, m.InterBeta)
	}
	m.PerServer, m.InterAlpha, m.InterBeta = 0, 0, 0
	return m
}

// TopologyFromHosts derives the topology from the host of every rank: the
// ranks of one host are one server. They must be numbered host by host,
// the same number on every host; one host is one level.
func TopologyFromHosts(hosts []string) (Topology, error) {
	n := len(hosts)
	if n == 0 {
		return Topology{}, nil
	}
	per := 1
	for per < n && hosts[per] == hosts[0] {
		per++
	}
	if n%per != 0 {
		return Topology{}, fmt.Errorf("--topology auto: host %s has %d ranks, which does not divide the world's %d; give --topology servers=S,per-server=P", hosts[0], per, n)
	}
	seen := map[string]bool{}
	for s := 0; s < n; s += per {
		h := hosts[s]
		if seen[h] {
			return Topology{}, fmt.Errorf("--topology auto: the ranks of host %s are not numbered together; give --topology servers=S,per-server=P", h)
		}
		seen[h] = true
		for r := s; r < s+per; r++ {
			if hosts[r] != h {
				return Topology{}, fmt.Errorf("--topology auto: host %s has %d ranks where host %s has %d; give --topology servers=S,per-server=P", h, r-s, hosts[0], per)
			}
		}
	}
	if per == n {
		return Topology{}, nil
	}
	return Topology{Servers: n / per, PerServer: per}, nil
}
