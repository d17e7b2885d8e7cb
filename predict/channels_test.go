package predict

import (
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// TestChannelsApart checks which algorithms on which clusters are costed
// with channels that issue their messages side by side (ChannelGap):
// multiring on devices only; and that the simulator command predict
// prints for an algorithm gives the simulated ranks the same gap.
func TestChannelsApart(t *testing.T) {
	device := truth
	tests := []struct {
		name  string
		edit  func(m *clustermodel.Model)
		algo  string
		apart bool
	}{
		{"multiring on devices", func(*clustermodel.Model) {}, "multiring", true},
		{"hier on devices", func(*clustermodel.Model) {}, "hier", false},
		{"ring on devices", func(*clustermodel.Model) {}, "ring", false},
		{"multiring on shm (fused)", func(m *clustermodel.Model) { m.Fused = true }, "multiring", false},
		{"multiring on tcp (the sender copies)", func(m *clustermodel.Model) { m.SenderMoves = true }, "multiring", false},
		{"multiring on shared CPUs", func(m *clustermodel.Model) { m.Cores = 2 }, "multiring", false},
	}
	w := clustermodel.World{Servers: 2, PerServer: 8}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := device
			tc.edit(&m)
			cm := m.Coll(clustermodel.Op{Name: "allreduce", BWScale: 1, LatScale: 1}, w)
			got := algoModel(&m, cm, tc.algo)
			want := cm
			if tc.apart {
				want.Gap = ChannelGap
			}
			if got != want {
				t.Errorf("gap %g s, want %g (0: coll's default, half the latency)", got.Gap, want.Gap)
			}
			cmd := SimCommand(&m, w, tc.algo)
			if strings.Contains(cmd, "--sim-gap 1ns") != tc.apart {
				t.Errorf("simulator command %q: --sim-gap 1ns present %v, want %v", cmd, !tc.apart, tc.apart)
			}
			if tc.apart && coll.Predict(coll.AllReduce, tc.algo, w.Ranks(), 1<<20, got) >= coll.Predict(coll.AllReduce, tc.algo, w.Ranks(), 1<<20, cm) {
				t.Errorf("channels apart cost no less than one engine handing out every channel's message")
			}
		})
	}
}
