package results

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPublicLogs reads real logs published by others (testdata/public,
// whose README cites each): the collective from where each says it (or
// --op), the ranks, the hosts and the servers x ranks per server, every
// row a measurement, and hccl_test's busbw computed.
func TestPublicLogs(t *testing.T) {
	for _, tc := range []struct {
		file      string
		opt       LogOptions
		op        string
		ranks     int
		hosts     []string
		perServer int
		rows      int
		iters     int
	}{
		{"skypilot-h200-2x8.log", LogOptions{Op: "allgather"}, "allgather", 16, []string{"nc-d87e1263-head", "nc-d87e1263-worker1"}, 8, 16, 100},
		{"gcp-h200-all_gather-2x8.log", LogOptions{}, "allgather", 16, []string{"nccl-test-host-1", "nccl-test-host-2"}, 8, 16, 100},
		{"ztan-NCCL-test-result", LogOptions{}, "allreduce", 16, []string{"ztan-mig-235z", "ztan-mig-gq73"}, 8, 16, 20},
		{"hccl_test-execution-md.log", LogOptions{}, "allreduce", 8, nil, 0, 14, 20},
		// One cluster at three scales (xxrjun/nccl-tests-cluster's example-cluster01).
		{"cluster01-nccl_N1_G8_cnode3-002.log", LogOptions{}, "alltoall", 8, []string{"cnode3-002"}, 8, 20, 20},
		{"cluster01-nccl_N2_G8_cnode3-002_cnode3-003.log", LogOptions{}, "alltoall", 16, []string{"cnode3-002", "cnode3-003"}, 8, 6, 20},
		{"cluster01-nccl_N10_G8.log", LogOptions{}, "alltoall", 80, []string{"cnode3-002", "cnode3-003", "cnode3-004", "cnode3-005",
			"cnode3-006", "cnode3-007", "cnode3-008", "cnode3-009", "cnode3-010", "cnode3-011"}, 8, 20, 20},
	} {
		t.Run(tc.file, func(t *testing.T) {
			runs, err := ReadLog(filepath.Join("testdata/public", tc.file), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Fatalf("%d runs, want 1", len(runs))
			}
			h := runs[0].Header
			if !slices.Equal(h.Ops, []string{tc.op}) || h.Ranks != tc.ranks || h.Iters != tc.iters || len(runs[0].Records) != tc.rows {
				t.Errorf("ops %q ranks %d iters %d rows %d; want %s, %d, %d, %d", h.Ops, h.Ranks, h.Iters, len(runs[0].Records), tc.op, tc.ranks, tc.iters, tc.rows)
			}
			if !slices.Equal(h.RankHosts.Hosts, tc.hosts) || h.RankHosts.PerServer() != tc.perServer || (tc.hosts != nil && h.RankHosts.Ranks() != tc.ranks) {
				t.Errorf("topology %+v", h.RankHosts)
			}
			for _, r := range runs[0].Records {
				if !(r.TimeUS > 0) || math.IsNaN(r.AlgBW) || math.IsNaN(r.BusBW) {
					t.Fatalf("record %+v", r)
				}
			}
		})
	}
	// hccl_test prints no busbw: ours is algbw x 2(8-1)/8 on its 8 ranks.
	runs, err := ReadLog("testdata/public/hccl_test-execution-md.log", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := runs[0].Records[13]; r.Bytes != 67108864 || r.AlgBW != 23.76245 || math.Abs(r.BusBW-23.76245*1.75) > 1e-9 {
		t.Errorf("last row %+v", r)
	}
	// SkyPilot's log does not name its collective.
	if _, err := ReadLog("testdata/public/skypilot-h200-2x8.log", LogOptions{}); err == nil || !strings.Contains(err.Error(), "give it with --op") {
		t.Errorf("without --op: %v", err)
	}
}
