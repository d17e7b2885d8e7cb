package predict

import (
	"testing"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// TestFitTellsPorts fits logs made from known figures whose link between
// servers is a rank's (a NIC a GPU) or a server's, shared by its ranks (a
// NIC a host): with runs of two servers of one rank and of four ranks a
// server, fit must choose the true one, say the rows told it, and find
// every figure within 2%.
func TestFitTellsPorts(t *testing.T) {
	worlds := []clustermodel.World{{Servers: 1, PerServer: 2}, {Servers: 1, PerServer: 4}, {Servers: 2, PerServer: 1}, {Servers: 2, PerServer: 4}}
	ops := []coll.Op{coll.AllReduce, coll.AllGather, coll.ReduceScatter, coll.AllToAll, coll.SendRecv}
	for _, ports := range []string{clustermodel.PortsRank, clustermodel.PortsServer} {
		t.Run(ports, func(t *testing.T) {
			m := truth
			inter := *truth.Inter
			inter.Ports = ports
			m.Inter = &inter
			fit := fitSynthetic(t, &m, ops, worlds)
			got := fit.Model
			if got.Inter == nil || got.Inter.Ports != ports || !fit.PortsTold || len(fit.Ports) != 2 {
				t.Fatalf("fitted inter %+v, told %v, tried %+v: want ports %s, told", got.Inter, fit.PortsTold, fit.Ports, ports)
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"intra alpha", got.Intra.AlphaUS, m.Intra.AlphaUS}, {"intra bw", got.Intra.GBps, m.Intra.GBps},
				{"inter alpha", got.Inter.AlphaUS, m.Inter.AlphaUS}, {"inter bw", got.Inter.GBps, m.Inter.GBps},
				{"reduce", got.ReduceGBps, m.ReduceGBps},
			} {
				if !within(c.got, c.want, 0.02) {
					t.Errorf("%s: fitted %.4g, true %.4g (more than 2%% off)", c.name, c.got, c.want)
				}
			}
			for _, o := range got.Ops {
				if !within(o.BWScale, 1, 0.02) || !within(o.LatScale, 1, 0.02) {
					t.Errorf("%s: scales bw %.4g lat %.4g, want 1", o.Name, o.BWScale, o.LatScale)
				}
			}
		})
	}
}
