package predict

import (
	"fmt"
	"io"
	"strings"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// Exports are the formats --export writes, by name.
var Exports = []string{"simai", "nccl-tuner"}

// simaiOps are the collectives of SimAI's busbw table, in its order.
var simaiOps = []coll.Op{coll.AllReduce, coll.AllGather, coll.ReduceScatter, coll.AllToAll}

// WriteSimAI writes SimAI's analytical busbw table (the busbw.yaml of
// aliyun/SimAI's example): a name line, then the busbw in GB/s that the
// model predicts at size bytes for each collective of each parallel
// group, null where it cannot say:
//
//   - TP: the ranks of one server (per-server of w);
//   - DP: one rank on each of w's servers (null on one server);
//   - EP: the whole world of w;
//   - PP: a sendrecv between two servers (inside one on one server).
func WriteSimAI(out io.Writer, m *clustermodel.Model, w clustermodel.World, size int64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "hccl-test predict %s %dx%d\n", strings.ReplaceAll(m.Source, " ", "-"), w.Servers, w.PerServer)
	group := func(name string, g clustermodel.World) {
		fmt.Fprintf(&b, "%s:\n", name)
		for _, op := range simaiOps {
			fmt.Fprintf(&b, "%s,: %s\n", op, simaiBusBW(m, g, op, size))
		}
	}
	group("TP", clustermodel.World{Servers: 1, PerServer: w.PerServer})
	group("DP", clustermodel.World{Servers: w.Servers, PerServer: 1})
	group("EP", w)
	pp := clustermodel.World{Servers: 1, PerServer: 2}
	if w.Servers > 1 {
		pp = clustermodel.World{Servers: 2, PerServer: 1}
	}
	fmt.Fprintf(&b, "PP:\nbusbw: %s\n", simaiBusBW(m, pp, coll.SendRecv, size))
	_, err := io.WriteString(out, b.String())
	return err
}

// simaiBusBW is the predicted busbw of op on g at size, as SimAI writes
// it, or null where the model cannot say (one rank, no fit of op, no link
// between servers).
func simaiBusBW(m *clustermodel.Model, g clustermodel.World, op coll.Op, size int64) string {
	if g.Ranks() < 2 {
		return "null"
	}
	rows, err := Predict(m, Query{World: g, Ops: []coll.Op{op}, Sizes: []int64{size}})
	if err != nil || len(rows) == 0 {
		return "null"
	}
	return fmt.Sprintf("%.2f", rows[0].BusBW)
}

// ncclTunerOps are the collectives the NCCL tuner plugin's CSV rules
// take.
var ncclTunerOps = map[coll.Op]bool{coll.Broadcast: true, coll.Reduce: true, coll.AllGather: true, coll.ReduceScatter: true, coll.AllReduce: true}

// ncclAlgo is the NCCL algorithm nearest to one of ours: ring for the
// ring-like ones; for the others tree where NCCL has one (allreduce,
// broadcast, reduce) and ring where it has none; nvls for a reduction the
// model found done in the network.
func ncclAlgo(op coll.Op, algo string, inNetwork bool) string {
	switch {
	case inNetwork && op == coll.AllReduce:
		return "nvls"
	case algo == "ring" || algo == "multiring" || algo == "chain" || algo == "pipeline":
		return "ring"
	case op == coll.AllReduce || op == coll.Broadcast || op == coll.Reduce:
		return "tree"
	}
	return "ring"
}

// WriteNCCLTuner writes the NCCL tuner plugin example's CSV rules
// (NVIDIA/nccl ext-tuner/example, nccl_tuner.conf:
// collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks)
// for the rows of a predict on one world: one rule per run of sizes whose
// fastest algorithm maps to the same NCCL algorithm, from the previous
// rule's end to the row's size. The protocol is simple and the channels
// NCCL's default (-1): the model has neither.
func WriteNCCLTuner(out io.Writer, m *clustermodel.Model, rows []Row) error {
	var b strings.Builder
	b.WriteString("# NCCL tuner plugin rules (ext-tuner/example CSV): collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n")
	fmt.Fprintf(&b, "# predicted by hccl-test predict from a model of %s; the algorithm is the NCCL one nearest to the fastest of ours "+
		"(ring-like: ring; tree-like: tree); protocol and channels are not modelled (simple, -1)\n", m.Source)
	type rule struct {
		op     coll.Op
		lo, hi int64
		algo   string
	}
	var rules []rule
	for _, r := range rows {
		if !ncclTunerOps[r.Op] {
			continue
		}
		o, _ := m.Op(r.Op.String())
		algo := ncclAlgo(r.Op, r.Algo, o.InNetwork)
		last := len(rules) - 1
		if last >= 0 && rules[last].op == r.Op && rules[last].algo == algo {
			rules[last].hi = r.Bytes
			continue
		}
		lo := int64(0)
		if last >= 0 && rules[last].op == r.Op {
			lo = rules[last].hi + 1
		}
		rules = append(rules, rule{op: r.Op, lo: lo, hi: r.Bytes, algo: algo})
	}
	if len(rules) == 0 {
		return fmt.Errorf("no rows of broadcast, reduce, allgather, reducescatter or allreduce: the tuner takes no others")
	}
	for i, r := range rules {
		hi := r.hi
		if i+1 == len(rules) || rules[i+1].op != r.op {
			hi = 4294967295 // the last rule of an op covers every larger size, as the example's do
		}
		w := rows[0].World
		fmt.Fprintf(&b, "%s,%d,%d,%s,simple,-1,%d,%d\n", r.op, r.lo, hi, r.algo, w.Servers, w.Ranks())
	}
	_, err := io.WriteString(out, b.String())
	return err
}
