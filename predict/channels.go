package predict

import (
	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// ChannelGap is the gap (LogP's g, coll.Model.Gap) between the messages
// of one step of multiring on a device cluster, in seconds: a nanosecond,
// next to nothing. multiring's P messages a step are one per channel, and
// a device's channels are separate engines (NCCL's: one SM each) that
// hand out their messages at once, not one rank handing out P one after
// another; so they pay no gap for one another. Elsewhere (the other
// algorithms, whose several messages a step one engine hands out, and
// every algorithm of hccl-test's CPU backends, where one CPU a rank
// does) the gap is coll's default, half the latency inside a server.
const ChannelGap = 1e-9

// channelsApart says whether algo's messages of one step go out on
// channels that issue them side by side under m: multiring on devices
// (no CPU moves the data).
func channelsApart(m *clustermodel.Model, algo string) bool {
	return algo == "multiring" && m.Cores == 0 && !m.Fused && !m.SenderMoves
}

// algoModel is cm as algo is costed on m: with ChannelGap where its
// channels issue apart (channelsApart), else cm.
func algoModel(m *clustermodel.Model, cm coll.Model, algo string) coll.Model {
	if channelsApart(m, algo) {
		cm.Gap = ChannelGap
	}
	return cm
}
