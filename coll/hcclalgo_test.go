package coll

import (
	"maps"
	"strings"
	"testing"
)

func TestParseHCCLAlgo(t *testing.T) {
	ops := []Op{AllReduce, AllGather, Broadcast, AllToAll}
	tests := []struct {
		in      string
		want    map[Op]string
		wantErr string
	}{
		{"", map[Op]string{}, ""},
		{"level0:NA;level1:ring", map[Op]string{AllReduce: "ring", AllGather: "ring", Broadcast: "ring"}, ""},
		{"level0:NA;level1:pairwise", map[Op]string{AllToAll: "pairwise"}, ""},
		{"level1:NB", map[Op]string{AllGather: "bruck", AllToAll: "bruck"}, ""},
		{"allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:NB",
			map[Op]string{AllReduce: "ring", AllGather: "bruck"}, ""},
		{"level0:NA;level1:NHR", nil, "no counterpart"},
		{"level0:NA", nil, "no level1"},
		{"level2:ring", nil, "unknown level"},
		{"ring", nil, "not level"},
		{"allreduce=level1:pairwise", nil, "does not serve allreduce"},
		{"bogus=level1:ring", nil, "unknown collective"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseHCCLAlgo(tt.in, ops)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
