package isolate

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/cluster6 from its description")

// cluster6 is the corpus committed under testdata/cluster6, which the
// command's tests read: six hosts, node04 slow (6 GB/s against 20),
// node02-node05 measured twice with the second failing mid-row, and
// node01-node06 from hccl-test-like file naming without rank lines.
func cluster6() []pairLog {
	logs := cluster(6, func(i, j int) float64 {
		if i == 4 || j == 4 {
			return 6
		}
		return healthy(i, j)
	})
	for i := range logs {
		if logs[i].a == "node01" && logs[i].b == "node06" {
			logs[i].noRank, logs[i].file = true, "pair_node01_node06.txt"
		}
	}
	return append(logs, pairLog{a: host(2), b: host(5), gbps: 20, cutAt: 3, file: "node02-node05.retry.log"})
}

// TestCluster6 checks that testdata/cluster6 is what cluster6 describes
// (go test -run TestCluster6 -update rewrites it) and what isolate finds
// in it.
func TestCluster6(t *testing.T) {
	dir := filepath.Join("testdata", "cluster6")
	want := writeCorpus(t, cluster6())
	if *update {
		os.RemoveAll(dir)
		if err := os.CopyFS(dir, os.DirFS(want)); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		w, _ := os.ReadFile(filepath.Join(want, e.Name()))
		got, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || string(got) != string(w) {
			t.Errorf("%s differs from its description (go test -run TestCluster6 -update): %v", e.Name(), err)
		}
	}
	logs, op, err := ReadDir(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	hosts, pairs := named(Analyze(logs, op, DefaultConfig()))
	if !slices.Equal(hosts, []string{"node04"}) || !slices.Equal(pairs, []string{"node02-node05:flaky"}) {
		t.Errorf("named %q %q, want [node04] [node02-node05:flaky]", hosts, pairs)
	}
}

// TestPublicCorpus reads testdata/public (see its README.md): fifteen
// pairwise nccl-tests logs of six hosts of a public cluster. Both ops name
// the same three slow pairs and the failed one, and no host.
func TestPublicCorpus(t *testing.T) {
	want := []string{"cnode2-001-cnode2-004:slow", "cnode2-002-cnode2-006:slow", "cnode2-004-cnode2-006:slow", "cnode2-007-cnode2-016:failed"}
	for _, op := range []string{"sendrecv", "alltoall"} {
		logs, got, err := ReadDir(filepath.Join("testdata", "public"), op)
		if err != nil {
			t.Fatal(err)
		}
		r := Analyze(logs, got, DefaultConfig())
		hosts, pairs := named(r)
		if len(hosts) != 0 || !slices.Equal(pairs, want) {
			t.Errorf("%s: named %q %q, want no host and %q", op, hosts, pairs, want)
		}
		if r.Size != 16<<30 || len(r.Hosts) != 6 || r.Logs != 15 {
			t.Errorf("%s: size %d, %d hosts, %d logs; want 16 GiB, 6, 15", op, r.Size, len(r.Hosts), r.Logs)
		}
	}
	if _, _, err := ReadDir(filepath.Join("testdata", "public"), ""); err == nil || !strings.Contains(err.Error(), "several ops (alltoall, sendrecv)") {
		t.Errorf("no --op: %v, want the several ops refused", err)
	}
}
