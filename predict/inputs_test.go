package predict

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// TestReadOurs reads hccl-test's CSV and Go benchmark lines: collective,
// world, size, time and the algorithm that ran, and the refusals of a
// topology that contradicts the file and of two backends in one file.
func TestReadOurs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csvHead := "schema_version,backend,ranks,op,algo,size_bytes,time_us,p50_us,topology\n"
	bench := "backend: proc\nranks: 8\n\nBenchmarkAllReduce/backend=proc/ranks=8/dtype=fp32/redop=sum/size=4MiB 20 1000000 ns/op 4.2 algbw-GB/s 7.3 busbw-GB/s\n" +
		"BenchmarkSendRecv/backend=proc/ranks=8/dtype=fp32/size=512B 20 5000 ns/op 0.1 algbw-GB/s 0.1 busbw-GB/s\n"
	for _, tc := range []struct {
		name, file, topo, stat string
		want                   []Sample
		err                    string
	}{
		{name: "CSV of two servers", file: write("a.csv", csvHead+"1,tcp,8,allgather,auto:ring,8388608,2000,1500,2 servers x 4 ranks (ranks numbered server by server)\n"),
			want: []Sample{{Op: coll.AllGather, World: clustermodel.World{Servers: 2, PerServer: 4}, Bytes: 8 << 20, TimeUS: 2000, Algo: "ring"}}},
		{name: "CSV p50", file: write("b.csv", csvHead+"1,shm,4,allreduce,rhd,1024,30,20,\n"), stat: "p50",
			want: []Sample{{Op: coll.AllReduce, World: clustermodel.World{Servers: 1, PerServer: 4}, Bytes: 1024, TimeUS: 20, Algo: "rhd"}}},
		{name: "CSV given a topology", file: write("c.csv", csvHead+"1,proc,4,alltoall,auto,1024,30,20,\n"), topo: "servers=2,per-server=2",
			want: []Sample{{Op: coll.AllToAll, World: clustermodel.World{Servers: 2, PerServer: 2}, Bytes: 1024, TimeUS: 30}}},
		{name: "Go benchmark lines", file: write("d.txt", bench), topo: "per-server=4",
			want: []Sample{{Op: coll.AllReduce, World: clustermodel.World{Servers: 2, PerServer: 4}, Bytes: 4 << 20, TimeUS: 1000},
				{Op: coll.SendRecv, World: clustermodel.World{Servers: 2, PerServer: 4}, Bytes: 512, TimeUS: 5}}},
		{name: "topology against the column", file: write("e.csv", csvHead+"1,tcp,8,allgather,ring,1024,20,10,2 servers x 4 ranks\n"), topo: "servers=4,per-server=2",
			err: "contradicts the run's topology column"},
		{name: "two backends", file: write("f.csv", csvHead+"1,tcp,8,allgather,ring,1024,20,10,\n1,shm,8,allgather,ring,1024,20,10,\n"),
			err: "two clusters mixed: rows of hccl-test tcp and of hccl-test shm"},
		{name: "p50 of a benchmark file", file: write("g.txt", bench), stat: "p50", err: "--stat mean"},
		{name: "ranks beyond the limit", file: write("h.csv", csvHead+"1,tcp,100000,allgather,ring,1024,20,10,\n"), err: "up to 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ReadFile(tc.file, tc.topo, tc.stat)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Samples) != len(tc.want) {
				t.Fatalf("%d samples, want %d", len(f.Samples), len(tc.want))
			}
			for i, s := range f.Samples {
				w := tc.want[i]
				if s.Op != w.Op || s.World != w.World || s.Bytes != w.Bytes || !within(s.TimeUS, w.TimeUS, 1e-9) || s.Algo != w.Algo {
					t.Errorf("sample %d: %v %v %d B %.3f us %q, want %v %v %d B %.3f us %q", i, s.Op, s.World, s.Bytes, s.TimeUS, s.Algo,
						w.Op, w.World, w.Bytes, w.TimeUS, w.Algo)
				}
			}
		})
	}
}
