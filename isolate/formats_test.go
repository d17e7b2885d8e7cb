package isolate

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/results"
)

// toCSV writes the log as hccl-test's CSV (what convert writes).
func toCSV(t *testing.T, name string, text string) []byte {
	t.Helper()
	runs, _ := results.LogRuns(name, []byte(text))
	var b bytes.Buffer
	w := results.NewCSV(&b)
	var sum results.Summary
	for _, run := range runs {
		if err := w.Begin(run.Header); err != nil {
			t.Fatal(err)
		}
		for _, r := range run.Records {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
			sum.Add(r)
		}
	}
	if err := w.End(sum); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hcclTestLog is a pair's log as hccl_test writes it: algbw only, no
// hosts.
func hcclTestLog(gbps float64, check string) string {
	var b strings.Builder
	b.WriteString("the minbytes is 1048576, maxbytes is 67108864, iters is 20, warmup_iters is 10\n")
	b.WriteString("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n")
	for _, s := range sizes {
		bw := gbps * float64(s) / float64(s+256<<10)
		b.WriteString(strings.Join([]string{strconv.FormatInt(s, 10), strconv.FormatFloat(float64(s)/(bw*1e3), 'f', 2, 64),
			strconv.FormatFloat(bw, 'f', 5, 64), check}, " | ") + "\n")
	}
	return b.String()
}

// TestOtherFormats: hccl-test's CSV and hccl_test logs, hosts from file
// names, give the same verdict as nccl-tests logs; a failed hccl_test
// check fails its pair; logs of busbw and of algbw only are refused
// together.
func TestOtherFormats(t *testing.T) {
	slow := func(i, j int) float64 {
		if i == 3 || j == 3 {
			return 6
		}
		return healthy(i, j)
	}
	csvDir, hcclDir := t.TempDir(), t.TempDir()
	for _, l := range cluster(5, slow) {
		name := l.a + "-" + l.b
		if err := os.WriteFile(filepath.Join(csvDir, name+".csv"), toCSV(t, name, l.text()), 0o644); err != nil {
			t.Fatal(err)
		}
		check := "success"
		if name == "node01-node02" {
			check = "failed"
		}
		if err := os.WriteFile(filepath.Join(hcclDir, "pair_"+l.a+"_"+l.b+".txt"), []byte(hcclTestLog(l.gbps, check)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		dir, unit string
		pairs     []string
	}{{csvDir, "busbw", nil}, {hcclDir, "algbw", []string{"node01-node02:failed"}}} {
		logs, op, err := ReadDir(tc.dir, "")
		if err != nil {
			t.Fatal(err)
		}
		r := Analyze(logs, op, DefaultConfig())
		hosts, pairs := named(r)
		if r.Unit != tc.unit || !slices.Equal(hosts, []string{"node03"}) || !slices.Equal(pairs, tc.pairs) {
			t.Errorf("%s: unit %s, named %q %q; want %s, [node03] %q", filepath.Base(tc.dir), r.Unit, hosts, pairs, tc.unit, tc.pairs)
		}
	}
	// One nccl-tests log among the hccl_test ones: busbw against algbw.
	l := pairLog{a: "node01", b: "node09", gbps: 20}
	if err := os.WriteFile(filepath.Join(hcclDir, "node01-node09.log"), []byte(l.text()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadDir(hcclDir, ""); err == nil || !strings.Contains(err.Error(), "compare logs that give the same figure") {
		t.Errorf("busbw and algbw logs together: %v, want refused", err)
	}
}
