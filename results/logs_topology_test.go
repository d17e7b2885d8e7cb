package results

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

func readTestLog(name string, opt LogOptions) ([]LogRun, error) {
	return ReadLog(filepath.Join("testdata/logs", name), opt)
}

// TestReadLogOp checks where a run's collective comes from: the log, then
// --op, then the file's name; a log that none of them names is refused,
// saying how to name it, and --op that the log contradicts is refused.
func TestReadLogOp(t *testing.T) {
	for _, tc := range []struct {
		file, op string
		want     string // the run's collective, or the error's words
		err      error
	}{
		{file: "all_reduce_perf.log", want: "allreduce"},
		{file: "all_reduce_perf.log", op: "allgather", want: "allgather"}, // the user knows better than the file's name
		{file: "nccl-plain-no-op.log", want: "--op allreduce", err: ErrNoOp},
		{file: "nccl-plain-no-op.log", op: "broadcast", want: "broadcast"},
		{file: "hccl_test-no-launch.log", want: "--op", err: ErrNoOp},
		{file: "nccl-tests-2.19.log", op: "allgather", want: "--op allgather: the log says its test is allreduce"},
		{file: "nccl-tests-2.19.log", op: "allreduce", want: "allreduce"},
	} {
		t.Run(tc.file+"/"+tc.op, func(t *testing.T) {
			runs, err := readTestLog(tc.file, LogOptions{Op: tc.op})
			if err != nil {
				if !strings.Contains(err.Error(), tc.want) || (tc.err != nil && !errors.Is(err, tc.err)) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q, want one line with %q", err, tc.want)
				}
				return
			}
			for _, run := range runs {
				if !slices.Equal(run.Header.Ops, []string{tc.want}) {
					t.Errorf("ops %q, want %s", run.Header.Ops, tc.want)
				}
				for _, r := range run.Records {
					if r.Op != tc.want {
						t.Fatalf("record of %q", r.Op)
					}
				}
			}
		})
	}
}

// TestLogBusBW checks the bus bandwidth of hccl_test's rows, which give
// none: algbw times nccl-tests' factor where the collective and the ranks
// are known (from the log, its launch line, or the options), and none
// where either is not.
func TestLogBusBW(t *testing.T) {
	for _, tc := range []struct {
		file   string
		opt    LogOptions
		factor float64 // NaN: no bus bandwidth
		ranks  int
	}{
		{file: "hccl_test.log", factor: 2 * 7.0 / 8, ranks: 8},                                  // mpirun -n 8 ./bin/all_reduce_test
		{file: "all_gather_test-16p.log", factor: 15.0 / 16, ranks: 16},                         // mpirun -f hostfile -n 16 ./bin/all_gather_test
		{file: "hccl_test-no-launch.log", opt: LogOptions{Op: "allreduce"}, factor: math.NaN()}, // no ranks
		{file: "hccl_test-no-launch.log", opt: LogOptions{Op: "alltoall", Ranks: 32}, factor: 31.0 / 32, ranks: 32},
		{file: "hccl_test-no-launch.log", opt: LogOptions{Op: "broadcast", Ranks: 4}, factor: 1, ranks: 4},
	} {
		t.Run(tc.file+"/"+tc.opt.Op, func(t *testing.T) {
			runs, err := readTestLog(tc.file, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if runs[0].Header.Ranks != tc.ranks {
				t.Errorf("ranks %d, want %d", runs[0].Header.Ranks, tc.ranks)
			}
			for _, r := range runs[0].Records {
				want := r.AlgBW * tc.factor
				if math.IsNaN(want) != math.IsNaN(r.BusBW) || math.Abs(r.BusBW-want) > 1e-12*want {
					t.Fatalf("%d bytes: busbw %v, want %v (algbw %v)", r.Bytes, r.BusBW, want, r.AlgBW)
				}
			}
		})
	}
	if _, err := readTestLog("hccl_test.log", LogOptions{Ranks: 4}); err == nil || !strings.Contains(err.Error(), "--ranks 4: the log says its test ran on 8") {
		t.Errorf("--ranks against the log's mpirun -n 8: %v", err)
	}
	// A log that gives its own busbw keeps it.
	runs, err := readTestLog("nccl-tests-2.19.log", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := runs[0].Records[17]; r.BusBW != 86.31 {
		t.Errorf("nccl-tests' busbw %v, want the log's 86.31", r.BusBW)
	}
}

// TestLogTopology checks the topology made of the rank-to-host lines.
func TestLogTopology(t *testing.T) {
	for _, tc := range []struct {
		file      string
		hosts     []string
		perHost   []int
		rankHost  []int
		say       string
		perServer int
	}{
		{"all_reduce_perf.log", []string{"gpu-a01", "gpu-a02"}, []int{4, 4}, []int{0, 0, 0, 0, 1, 1, 1, 1}, "2 servers x 4 ranks", 4},
		{"nccl-plain-no-op.log", []string{"cn001", "cn002"}, []int{2, 2}, []int{0, 1, 0, 1}, "2 servers x 2 ranks, ranks interleaved", 2},
		{"hccl-test-J.json", []string{"vm"}, []int{4}, []int{0, 0, 0, 0}, "1 server x 4 ranks", 4},
		{"hccl_test.log", nil, nil, nil, "", 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			runs, err := readTestLog(tc.file, LogOptions{Op: "allreduce"})
			if err != nil {
				t.Fatal(err)
			}
			top := runs[0].Header.RankHosts
			if !slices.Equal(top.Hosts, tc.hosts) || !slices.Equal(top.RanksPerHost, tc.perHost) || !slices.Equal(top.RankHost, tc.rankHost) {
				t.Errorf("topology %+v", top)
			}
			if top.String() != tc.say || top.PerServer() != tc.perServer || top.Servers() != len(tc.hosts) {
				t.Errorf("says %q, %d per server, %d servers", top.String(), top.PerServer(), top.Servers())
			}
		})
	}
	odd := TopologyOf([]string{"a", "a", "a", "b", "b", "b", "c"})
	if odd.String() != "3 servers, 7 ranks (3, 3, 1)" || odd.PerServer() != 0 || !odd.Contiguous() {
		t.Errorf("uneven topology says %q", odd)
	}
	many := TopologyOf([]string{"node001", "node002", "node003", "node004"})
	if got := many.HostList(16); got != "node001,node002,... (2 more)" {
		t.Errorf("host list %q", got)
	}
}

// TestSamplesOfLogs checks what ReadSamples says of a log: hccl-test's
// own -J report is ours, not nccl-tests'; a log's topology comes along.
func TestSamplesOfLogs(t *testing.T) {
	for _, tc := range []struct {
		file, source, topology string
	}{
		{"hccl-test-J.json", "", "1 server x 4 ranks"},
		{"nccl-tests-J.json", "nccl-tests", "2 servers x 4 ranks"},
		{"all_reduce_perf.log", "nccl-tests", "2 servers x 4 ranks"},
		{"nccl-tests-concatenated.log", "nccl-tests", "2 servers x 4 ranks"},
		{"hccl_test.log", "hccl_test", ""},
	} {
		s, err := ReadSamples(filepath.Join("testdata/logs", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if s.Source != tc.source || s.Topology.String() != tc.topology {
			t.Errorf("%s: source %q topology %q, want %q and %q", tc.file, s.Source, s.Topology, tc.source, tc.topology)
		}
	}
}

// TestBenchFmtOfLog checks the configuration lines of a converted log: its
// hosts and servers, and not this machine's goos and goarch; a run of ours
// keeps them.
func TestBenchFmtOfLog(t *testing.T) {
	config := func(t *testing.T, h Header, recs []Record) map[string]string {
		var buf bytes.Buffer
		writeAll(t, NewBenchFmt(&buf), h, recs)
		r := benchfmt.NewReader(&buf, "x")
		m := map[string]string{}
		for r.Scan() {
			if res, ok := r.Result().(*benchfmt.Result); ok {
				for _, c := range res.Config {
					m[c.Key] = string(c.Value)
				}
			}
		}
		return m
	}
	runs, err := readTestLog("all_reduce_perf.log", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := config(t, runs[0].Header, runs[0].Records)
	for k, want := range map[string]string{"goos": "", "goarch": "", "hosts": "gpu-a01,gpu-a02", "servers": "2 servers x 4 ranks",
		"host": "gpu-a01", "source": "nccl-tests", "ranks": "8"} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
	ours := config(t, Header{Backend: "shm", Ranks: 4, Placement: "out"}, []Record{{Op: "allreduce", Bytes: 1024, TimeUS: 10, AlgBW: 0.1, BusBW: 0.15}})
	if ours["goos"] == "" || ours["goarch"] == "" || ours["hosts"] != "" {
		t.Errorf("a run of ours: %q", ours)
	}
}

// TestLongHeader reads a log whose rank lines alone are longer than the
// first MiB that tells a file's format (2,048 servers x 8 ranks, 16,384
// lines), as compare and plot read it.
func TestLongHeader(t *testing.T) {
	var b strings.Builder
	b.WriteString("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
	for r := range 2048 * 8 {
		fmt.Fprintf(&b, "#  Rank %5d Group  0 Pid %6d on gpu-node-%04d device %2d [0000:%02x:00] NVIDIA H100 80GB HBM3\n", r, 1000+r%8, r/8, r%8, r%8)
	}
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n")
	b.WriteString("     1048576        262144     float     sum      -1    203.2    5.16   10.32      0    207.2    5.06   10.12      0\n")
	if b.Len() <= 1<<20 {
		t.Fatalf("a header of %d bytes, want more than the 1 MiB read to tell the format", b.Len())
	}
	path := filepath.Join(t.TempDir(), "all_reduce_perf.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSamples(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != "nccl-tests" || s.Topology.Servers() != 2048 || s.Topology.PerServer() != 8 || s.Topology.Ranks() != 16384 {
		t.Errorf("source %q, topology %s", s.Source, s.Topology)
	}
}
