package sim

import "github.com/hccl-test/hccl-test/backends"

// ownLinks returns the link model own holds (the harness's own options
// for sim, backends.Settings.Own): a *LinkModel or a LinkModel; the zero
// model, which simulates DefaultLinkModel, for nil or another type.
func ownLinks(own any) LinkModel {
	switch l := own.(type) {
	case *LinkModel:
		if l != nil {
			return *l
		}
	case LinkModel:
		return l
	}
	return LinkModel{}
}

// Figures returns what m's links cost in the cost model's terms
// (backends.LinkFigures), zero fields taking their defaults (WithDefaults).
// A receive-and-reduce is one pass where receivers move the data (Pull).
func (m LinkModel) Figures() backends.LinkFigures {
	l := m.WithDefaults()
	return backends.LinkFigures{
		Alpha: l.IntraAlpha.Seconds(), Beta: 1 / (l.IntraGBps * 1e9), Gamma: 1 / (l.ReduceGBps * 1e9),
		Copy:      1 / (l.CopyGBps * 1e9),
		PerServer: l.PerServer, InterAlpha: l.InterAlpha.Seconds(), InterBeta: 1 / (l.InterGBps * 1e9),
		Gap: l.Gap.Seconds(), Fused: l.Pull,
	}
}

// LinkFigures implements backends.Modeled: the figures of the link model
// the world's settings s ask for (settingsLinks).
func (Backend) LinkFigures(s backends.Settings) backends.LinkFigures {
	return settingsLinks(s).Figures()
}

// DescribeLinks implements backends.Modeled: what the link model s asks
// for simulates for a world of ranks ranks (LinkModel.Describe).
func (Backend) DescribeLinks(s backends.Settings, ranks int) string {
	return settingsLinks(s).Describe(ranks)
}

// DefaultLinkGBps implements backends.Modeled: DefaultLinkModel's link
// inside a server.
func (Backend) DefaultLinkGBps() float64 { return DefaultLinkModel.IntraGBps }
