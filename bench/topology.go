package bench

import "strings"

// crossesServers reports whether some group of domain kind ("" for the
// world) spans servers under the plan's topology.
func (p *Plan) crossesServers(kind string) bool { return p.Topology.Crosses(p.Layout, p.Ranks, kind) }

// linkRule says, for the header, which link bounds the ops of each domain
// the sweep runs in.
func (p *Plan) linkRule() string {
	if !p.Topology.TwoLevel() {
		return ""
	}
	var inside, across []string
	for _, g := range p.groupList() {
		name := g
		if name == "" {
			name = "the world"
		}
		if p.crossesServers(g) {
			across = append(across, name)
		} else {
			inside = append(inside, name)
		}
	}
	var parts []string
	if len(across) > 0 {
		parts = append(parts, "across servers, "+strings.Join(across, ", ")+": against the link between servers")
	}
	if len(inside) > 0 {
		parts = append(parts, "inside a server, "+strings.Join(inside, ", ")+": against the link inside a server")
	}
	return strings.Join(parts, "; ")
}
