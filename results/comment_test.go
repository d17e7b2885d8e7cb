package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTableComment: a row's comment lines (nccl-tests' PRINT_SUMMARY
// block) follow its line, alone or paired with its in-place half, and the
// table still reads back (ReadLog) with every row and no extra one.
func TestTableComment(t *testing.T) {
	summary := []string{
		"# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=hot nranks=2 spec=hot time_usec=12.50",
		"#   rank=0 send_bytes=1024 recv_bytes=2048 alg_bw=0.16 bus_bw=0.08",
		"  rank=1 send_bytes=1024 recv_bytes=0 alg_bw=0.08 bus_bw=0.04", // made a comment
	}
	for _, tc := range []struct {
		name      string
		placement string
		inPlace   []bool
	}{
		{"out of place", "out", []bool{false, false}},
		{"both, paired", "both", []bool{false, true, false, true}},
		{"both, out of place only", "both", []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []Record
			for i, ip := range tc.inPlace {
				size := 1024 << i // one size a record
				if tc.placement == "both" && len(tc.inPlace) == 4 {
					size = 1024 << (i / 2) // a pair a size
				}
				r := record(int64(size), ip)
				r.Comment = summary
				recs = append(recs, r)
			}
			got := render(t, header(tc.placement, false), recs, Summary{Rows: len(recs)})
			lines := strings.Split(got, "\n")
			var rows, comments int
			for i, l := range lines {
				if strings.HasPrefix(l, "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY") {
					comments++
					if i == 0 || strings.HasPrefix(lines[i-1], "#") && !strings.HasPrefix(lines[i-1], "#   rank=1") && !strings.HasPrefix(lines[i-1], "# NCCL") {
						t.Errorf("line %d: the summary does not follow a row or another summary:\n%s", i, got)
					}
				}
				if l == "#   rank=1 send_bytes=1024 recv_bytes=0 alg_bw=0.08 bus_bw=0.04" {
					rows++
				}
			}
			if comments != len(recs) || rows != len(recs) {
				t.Errorf("%d summaries (%d made comments), want %d:\n%s", comments, rows, len(recs), got)
			}
			path := filepath.Join(t.TempDir(), "table.txt")
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			runs, err := ReadLog(path, LogOptions{Op: "allreduce"})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || len(runs[0].Records) != len(recs) {
				n := 0
				if len(runs) > 0 {
					n = len(runs[0].Records)
				}
				t.Fatalf("read %d runs, %d records; want 1 run of %d:\n%s", len(runs), n, len(recs), got)
			}
		})
	}
}
