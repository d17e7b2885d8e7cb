package results

import (
	"fmt"
	"slices"
	"strings"
)

// Topology is where the ranks of a run sat: its hosts (servers) and the
// ranks on each, as a log of another tool tells it (nccl-tests' and
// rccl-tests' rank-to-host lines, "#  Rank  3 Group  0 Pid 1234 on node02
// device  3 ...", or the devices of a -J report). The zero value is a run
// whose hosts are not known.
//
// Fitting a cluster's model reads Servers and PerServer from it; the
// search for a bad host reads RankHost. A Topology shared by records or
// samples must not be modified.
type Topology struct {
	// Hosts are the distinct hosts, in the order of their first rank.
	Hosts []string
	// RanksPerHost[i] is the number of ranks on Hosts[i].
	RanksPerHost []int
	// RankHost[r] is the index in Hosts of rank r's host.
	RankHost []int
}

// TopologyOf returns the topology of a run whose rank r ran on hosts[r];
// the zero Topology for no hosts.
func TopologyOf(hosts []string) Topology {
	var t Topology
	index := map[string]int{}
	for _, h := range hosts {
		i, ok := index[h]
		if !ok {
			i = len(t.Hosts)
			index[h] = i
			t.Hosts = append(t.Hosts, h)
			t.RanksPerHost = append(t.RanksPerHost, 0)
		}
		t.RanksPerHost[i]++
		t.RankHost = append(t.RankHost, i)
	}
	return t
}

// Known reports whether the hosts of the ranks are known.
func (t Topology) Known() bool { return len(t.Hosts) > 0 }

// Ranks returns the number of ranks the topology places.
func (t Topology) Ranks() int { return len(t.RankHost) }

// Servers returns the number of hosts.
func (t Topology) Servers() int { return len(t.Hosts) }

// PerServer returns the ranks on each host when every host has as many,
// 0 when they differ (or the topology is not known).
func (t Topology) PerServer() int {
	if !t.Known() {
		return 0
	}
	for _, n := range t.RanksPerHost[1:] {
		if n != t.RanksPerHost[0] {
			return 0
		}
	}
	return t.RanksPerHost[0]
}

// Contiguous reports whether each host's ranks are numbered together
// (ranks 0-7 on one host, 8-15 on the next), as hccl-test's --topology
// numbers them.
func (t Topology) Contiguous() bool {
	for r := 1; r < len(t.RankHost); r++ {
		if t.RankHost[r] != t.RankHost[r-1] && t.RankHost[r] != t.RankHost[r-1]+1 {
			return false
		}
	}
	return true
}

// Equal reports whether t and u place every rank on the same host.
func (t Topology) Equal(u Topology) bool {
	return slices.Equal(t.Hosts, u.Hosts) && slices.Equal(t.RankHost, u.RankHost)
}

// String describes the topology for a header: "2 servers x 8 ranks",
// "3 servers, 20 ranks (8, 8, 4)", with "ranks interleaved" when a host's
// ranks are not numbered together; "" when not known.
func (t Topology) String() string {
	if !t.Known() {
		return ""
	}
	var s string
	if per := t.PerServer(); per > 0 {
		s = fmt.Sprintf("%s x %s", Count(t.Servers(), "server"), Count(per, "rank"))
	} else {
		counts := make([]string, len(t.RanksPerHost))
		for i, n := range t.RanksPerHost {
			counts[i] = fmt.Sprint(n)
		}
		s = fmt.Sprintf("%s, %s (%s)", Count(t.Servers(), "server"), Count(t.Ranks(), "rank"), strings.Join(counts, ", "))
	}
	if !t.Contiguous() {
		s += ", ranks interleaved"
	}
	return s
}

// HostList returns the hosts comma-separated, the first of them when the
// list would be longer than max bytes, and how many more: "node01,node02",
// "node001,node002,... (254 more)".
func (t Topology) HostList(max int) string {
	var b strings.Builder
	for i, h := range t.Hosts {
		if i > 0 && b.Len()+1+len(h) > max {
			fmt.Fprintf(&b, ",... (%d more)", len(t.Hosts)-i)
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(h)
	}
	return b.String()
}
