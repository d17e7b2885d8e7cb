package isolate

import (
	"bytes"
	"encoding/csv"
	"math"
	"slices"
	"strings"
	"testing"
)

// named returns the names of the hosts and pairs r names, hosts in rank
// order.
func named(r *Report) (hosts, pairs []string) {
	hs, ps := r.Named()
	for _, h := range hs {
		hosts = append(hosts, h.Name)
	}
	for _, p := range ps {
		pairs = append(pairs, p.A+"-"+p.B+":"+p.Verdict)
	}
	return hosts, pairs
}

func TestAnalyzeCorpora(t *testing.T) {
	slowHost := func(bad int) func(i, j int) float64 {
		return func(i, j int) float64 {
			if i == bad || j == bad {
				return 6
			}
			return healthy(i, j)
		}
	}
	withFlaky := func(logs []pairLog) []pairLog {
		// node02-node05 measured twice: once fine, once failed mid-row.
		return append(logs, pairLog{a: host(2), b: host(5), gbps: 20, cutAt: 3, file: "node02-node05.retry.log"})
	}
	cutHost := func(logs []pairLog, bad string, at int) []pairLog {
		for i := range logs {
			if logs[i].a == bad || logs[i].b == bad {
				logs[i].cutAt = at
			}
		}
		return logs
	}
	tests := []struct {
		name       string
		logs       []pairLog
		wantHosts  []string // named, ranked
		wantPairs  []string // named in their own right
		wantSize   int64
		checkRatio string // a host whose median ratio must be below 0.5
	}{
		{name: "healthy 6", logs: cluster(6, healthy), wantSize: 64 << 20},
		{name: "one slow host of 6", logs: cluster(6, slowHost(4)), wantHosts: []string{"node04"}, wantSize: 64 << 20, checkRatio: "node04"},
		{name: "one slow host of 4", logs: cluster(4, slowHost(2)), wantHosts: []string{"node02"}, wantSize: 64 << 20, checkRatio: "node02"},
		{name: "one slow host of 3", logs: cluster(3, slowHost(3)), wantHosts: []string{"node03"}, wantSize: 64 << 20},
		{name: "slow host and flaky pair", logs: withFlaky(cluster(6, slowHost(4))), wantHosts: []string{"node04"},
			wantPairs: []string{"node02-node05:flaky"}, wantSize: 64 << 20},
		{name: "host whose logs fail mid-row", logs: cutHost(cluster(6, healthy), "node03", 3), wantHosts: []string{"node03"}, wantSize: 64 << 20},
		{name: "slow host and failed host ranked", logs: cutHost(cluster(7, slowHost(6)), "node02", 2),
			wantHosts: []string{"node02", "node06"}, wantSize: 64 << 20},
		{name: "two hosts: the pair, not a host", logs: []pairLog{{a: "a1", b: "b1", gbps: 20, cutAt: 2}}, wantPairs: []string{"a1-b1:failed"}},
		{name: "wrong elements fail a pair", logs: func() []pairLog {
			l := cluster(5, healthy)
			l[0].wrong = 3 // node01-node02
			return l
		}(), wantPairs: []string{"node01-node02:failed"}, wantSize: 64 << 20},
		{name: "hosts from file names", logs: func() []pairLog {
			l := cluster(5, slowHost(5))
			for i := range l {
				l[i].noRank = true
				l[i].file = "pair_" + l[i].a + "_" + l[i].b + ".txt"
			}
			return l
		}(), wantHosts: []string{"node05"}, wantSize: 64 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeCorpus(t, tt.logs)
			logs, op, err := ReadDir(dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if op != "sendrecv" {
				t.Errorf("op %q, want sendrecv", op)
			}
			r := Analyze(logs, op, DefaultConfig())
			hosts, pairs := named(r)
			var text bytes.Buffer
			r.WriteText(&text)
			if !slices.Equal(hosts, tt.wantHosts) || !slices.Equal(pairs, tt.wantPairs) {
				t.Errorf("named hosts %q pairs %q, want %q %q\n%s", hosts, pairs, tt.wantHosts, tt.wantPairs, text.String())
			}
			if tt.wantSize != 0 && r.Size != tt.wantSize {
				t.Errorf("size %d, want %d", r.Size, tt.wantSize)
			}
			for _, h := range r.Hosts {
				if h.Name == tt.checkRatio && !(h.Ratio < 0.5) {
					t.Errorf("%s ratio %v, want below 0.5", h.Name, h.Ratio)
				}
			}
			for _, h := range tt.wantHosts {
				if !strings.Contains(text.String(), "named host") || !strings.Contains(text.String(), h) {
					t.Errorf("the report does not name %s:\n%s", h, text.String())
				}
			}
		})
	}
}

// TestSlowPairFigure checks the figure and ratio against the corpus's
// own formula: busbw at 64 MiB is gbps x 64Mi/(64Mi+256Ki).
func TestSlowPairFigure(t *testing.T) {
	logs := cluster(5, func(i, j int) float64 {
		if i == 1 && j == 3 {
			return 10
		}
		return 20
	})
	dir := writeCorpus(t, logs)
	ls, op, err := ReadDir(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	r := Analyze(ls, op, DefaultConfig())
	plateau := float64(64<<20) / float64(64<<20+256<<10)
	if math.Abs(r.Median-20*plateau) > 0.01 {
		t.Errorf("median %v, want %v", r.Median, 20*plateau)
	}
	_, pairs := named(r)
	if !slices.Equal(pairs, []string{"node01-node03:slow"}) {
		t.Fatalf("named pairs %q, want node01-node03:slow", pairs)
	}
	for _, p := range r.Pairs {
		if p.A == "node01" && p.B == "node03" && math.Abs(p.Ratio-0.5) > 0.01 {
			t.Errorf("ratio %v, want 0.5", p.Ratio)
		}
	}
	var b bytes.Buffer
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+10 || !slices.Equal(rows[0], CSVHeader) {
		t.Fatalf("CSV has %d rows, header %q; want 11 and %q", len(rows), rows[0], CSVHeader)
	}
}

func TestNameHosts(t *testing.T) {
	tests := []struct {
		name  string
		known []string
		want  []string
	}{
		{"nodeA-nodeB.log", nil, []string{"nodeA", "nodeB"}},
		{"pair_nodeA_nodeB.txt", nil, []string{"nodeA", "nodeB"}},
		{"nccl_N2_G1_cnode4-006_cnode4-007.log", nil, []string{"cnode4-006", "cnode4-007"}},
		{"gpu-01__gpu-02.out", nil, []string{"gpu-01", "gpu-02"}},
		{"gpu-01-gpu-02.log", []string{"gpu-01", "gpu-02"}, []string{"gpu-01", "gpu-02"}},
		{"node10_node1.log", []string{"node10", "node1"}, []string{"node10", "node1"}},
		{"gpu-01-gpu-02.log", nil, nil},
		{"results.log", nil, nil},
		{"a-a.log", nil, nil},
	}
	for _, tt := range tests {
		if got := NameHosts(tt.name, tt.known); !slices.Equal(got, tt.want) {
			t.Errorf("NameHosts(%q, %q) = %q, want %q", tt.name, tt.known, got, tt.want)
		}
	}
}

func TestRankHosts(t *testing.T) {
	data := []byte("[1,0]<stdout>:#  Rank  2 Group  0 Pid 12 on hostB device  0 [x] X\n" +
		"#  Rank  0 Group  0 Pid 10 on hostA device  0 [x] X\n#   Rank  1 Pid 11 on hostA device  1 [x] X\n3: # not a rank line\n")
	if got := RankHosts(data); !slices.Equal(got, []string{"hostA", "hostB"}) {
		t.Errorf("RankHosts = %q, want [hostA hostB]", got)
	}
	if got := RankHosts([]byte("# nothing\n")); got != nil {
		t.Errorf("RankHosts of no rank lines = %q, want nil", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{K: math.NaN(), Floor: 0.8}, {K: -1, Floor: 0.8}, {K: math.Inf(1), Floor: 0.8},
		{K: 3, Floor: 0}, {K: 3, Floor: 1.5}, {K: 3, Floor: math.NaN()}} {
		if c.Validate() == nil {
			t.Errorf("%+v: valid, want refused", c)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Error(err)
	}
}

// TestMixedRanksRefused: logs of runs of different sizes (one GPU a
// host, then two, as pairwise scripts run them) are refused naming both;
// logs of one size are read, whatever it is.
func TestMixedRanksRefused(t *testing.T) {
	withGPUs := func(logs []pairLog, gpus int) []pairLog {
		for i := range logs {
			logs[i].gpus = gpus
		}
		return logs
	}
	g2 := withGPUs(cluster(4, healthy), 2)
	for i := range g2 {
		g2[i].file = "g2_" + g2[i].a + "-" + g2[i].b + ".log"
	}
	tests := []struct {
		name      string
		logs      []pairLog
		wantRanks int
		wantErr   []string // in the refusal, "" when read
	}{
		{name: "one GPU a host", logs: cluster(4, healthy), wantRanks: 2},
		{name: "two GPUs a host", logs: withGPUs(cluster(4, healthy), 2), wantRanks: 4},
		{name: "one and two mixed", logs: append(cluster(4, healthy), g2...),
			wantErr: []string{"g2_node01-node02.log ran on 4 ranks and", "node01-node02.log on 2", "compare runs of one size"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs, _, err := ReadDir(writeCorpus(t, tt.logs), "")
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("read %d logs, want refused", len(logs))
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("refusal %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range logs {
				if l.Ranks != tt.wantRanks {
					t.Errorf("%s: ranks %d, want %d", l.Path, l.Ranks, tt.wantRanks)
				}
			}
		})
	}
}
