package isolate

import (
	"testing"
)

// FuzzNames: file names and rank lines never panic, and what they give
// is two distinct, non-empty hosts or nothing.
func FuzzNames(f *testing.F) {
	f.Add("pair_nodeA_nodeB.txt", "#  Rank  0 Group  0 Pid 1 on a device  0 [x] X\n")
	f.Add("nccl_N2_G1_cnode4-006_cnode4-007.log", "#  Rank 99999999999999999999 Pid 1 on b device\n")
	f.Add("--.log", "")
	f.Fuzz(func(t *testing.T, name, data string) {
		hosts := RankHosts([]byte(data))
		for _, h := range hosts {
			if h == "" {
				t.Fatalf("RankHosts(%q) gave an empty host", data)
			}
		}
		if hs := NameHosts(name, hosts); hs != nil && (len(hs) != 2 || hs[0] == "" || hs[1] == "" || hs[0] == hs[1]) {
			t.Fatalf("NameHosts(%q, %q) = %q", name, hosts, hs)
		}
	})
}

// FuzzCSVRecords: a CSV of any content is rows or an error, never a
// panic.
func FuzzCSVRecords(f *testing.F) {
	f.Add([]byte("schema_version,op,size_bytes,busbw_GBps,wrong\n1,sendrecv,1024,2.5,0\n"))
	f.Add([]byte("op,size_bytes,busbw_GBps\nx,-1,NaN\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, ranks, err := csvRecords("f.csv", data)
		if err == nil {
			if ranks < 0 {
				t.Fatalf("ranks %d", ranks)
			}
			for _, r := range recs {
				if r.Bytes < 0 || r.BusBW < 0 {
					t.Fatalf("record %+v", r)
				}
			}
		}
	})
}
