package predict

import (
	"fmt"
	"testing"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// cpuTruth is a host of 2 CPUs whose shm ranks share them, made up.
var cpuTruth = clustermodel.Model{
	Version: clustermodel.Version, Kind: clustermodel.Kind, Source: "hccl-test shm",
	Intra: clustermodel.Level{AlphaUS: 5, GBps: 12}, ReduceGBps: 10, Fused: true, Cores: 2,
}

// cpuRows are the rows m predicts for every collective of ops on one
// server of each of widths, from 32 to 128 MiB by 2, as one file of
// hccl-test's shm rows per width: the algorithm that ran the fastest of
// ours.
func cpuRows(m *clustermodel.Model, ops []coll.Op, widths []int) []*File {
	var files []*File
	for _, p := range widths {
		f := &File{Path: fmt.Sprintf("shm-%d.csv", p), Cluster: Cluster{Source: m.Source}}
		w := clustermodel.World{Servers: 1, PerServer: p}
		for _, op := range ops {
			o := clustermodel.Op{Name: op.String(), BWScale: 1, LatScale: 1}
			for size := int64(32 << 20); size <= 128<<20; size *= 2 {
				sec, algo := predictSample(m, o, Sample{Op: op, World: w, Bytes: size})
				f.Samples = append(f.Samples, Sample{File: f.Path, Op: op, World: w, Bytes: size, TimeUS: sec * 1e6, Algo: algo})
			}
		}
		files = append(files, f)
	}
	return files
}

// TestFitTellsHost fits rows of 2 and 4 ranks on one host made from known
// figures with and without a host's rate that its ranks share (HostGBps:
// allgather and alltoall copy their own block too, so their busbw falls
// less from 2 to 4 ranks than the shared CPUs alone would have it): with
// one, fit must keep it, find it within 2% and predict 8 ranks within 2%;
// without one, leave it out.
func TestFitTellsHost(t *testing.T) {
	ops := []coll.Op{coll.AllReduce, coll.AllGather, coll.ReduceScatter, coll.AllToAll, coll.SendRecv}
	for _, host := range []float64{0, 20} {
		t.Run(fmt.Sprintf("host %v GB/s", host), func(t *testing.T) {
			m := cpuTruth
			m.HostGBps = host
			fit, err := FitFiles(cpuRows(&m, ops, []int{2, 4}), Options{Cores: 2})
			if err != nil {
				t.Fatal(err)
			}
			got := fit.Model
			if told := host > 0; fit.Host.Told != told || (got.HostGBps > 0) != told {
				t.Fatalf("host tried %+v, model's %v GB/s: want it kept %v", fit.Host, got.HostGBps, told)
			}
			if host > 0 && !within(got.HostGBps, host, 0.02) {
				t.Errorf("host: fitted %.4g GB/s, true %.4g", got.HostGBps, host)
			}
			for _, want := range cpuRows(&m, ops, []int{8})[0].Samples {
				o, _ := got.Op(want.Op.String())
				sec, _ := predictSample(got, o, want)
				if !within(sec*1e6, want.TimeUS, 0.02) {
					t.Errorf("%v at 8 ranks, %d bytes: predicted %.1f us, true %.1f", want.Op, want.Bytes, sec*1e6, want.TimeUS)
				}
			}
		})
	}
}
