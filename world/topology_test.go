package world

import (
	"strings"
	"testing"
)

func TestParseTopology(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want Topology
		err  string
	}{
		{"servers=2,per-server=4", 8, Topology{2, 4}, ""},
		{"per-server=4", 16, Topology{4, 4}, ""},
		{"servers=8", 8, Topology{8, 1}, ""},
		{"servers=3", 8, Topology{}, "must be the world's 8 ranks"},
		{"servers=2,per-server=2", 8, Topology{}, "must be the world's 8 ranks"},
		{"racks=2", 8, Topology{}, `unknown key "racks"`},
		{"servers=0", 8, Topology{}, "positive number"},
		// Hostile values: each names the real limit, the world's ranks.
		{"servers=-1", 8, Topology{}, `"servers=-1" is not servers=S or per-server=P with a positive number`},
		{"servers=NaN", 8, Topology{}, `"servers=NaN" is not servers=S or per-server=P with a positive number`},
		{"servers=", 8, Topology{}, `"servers=" is not servers=S or per-server=P with a positive number`},
		{"per-server=1x", 8, Topology{}, `"per-server=1x" is not servers=S or per-server=P with a positive number`},
		{"servers=16", 8, Topology{}, `"servers=16": want 1 to 8, the world's ranks`},
		{"servers=9223372036854775807", 8, Topology{}, `"servers=9223372036854775807": want 1 to 8, the world's ranks`},
		{"per-server=99999999999999999999", 8, Topology{}, `"per-server=99999999999999999999": want 1 to 8, the world's ranks`},
		{"servers=-99999999999999999999", 8, Topology{}, `"servers=-99999999999999999999": want 1 to 8, the world's ranks`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTopology(tt.in, tt.n)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	top := Topology{2, 4}
	if top.Spans([]int{0, 1, 2, 3}) || !top.Spans([]int{3, 4}) || (Topology{}).Spans([]int{0, 7}) {
		t.Error("Spans is wrong")
	}
}

func TestTopologyFromHosts(t *testing.T) {
	tests := []struct {
		hosts []string
		want  Topology
		err   string
	}{
		{[]string{"a", "a", "a", "a"}, Topology{}, ""},
		{[]string{"a", "a", "b", "b", "c", "c"}, Topology{3, 2}, ""},
		{[]string{"a", "b", "c"}, Topology{3, 1}, ""},
		{[]string{"a", "a", "b"}, Topology{}, "does not divide"},
		{[]string{"a", "a", "b", "b", "a", "a"}, Topology{}, "not numbered together"},
		{[]string{"a", "a", "b", "c"}, Topology{}, "host b has 1 ranks where host a has 2"},
	}
	for _, tt := range tests {
		got, err := TopologyFromHosts(tt.hosts)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: got %v, want an error with %q", tt.hosts, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: got %+v, %v; want %+v", tt.hosts, got, err, tt.want)
		}
	}
}
