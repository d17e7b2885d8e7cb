package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/coll"
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

// hostsBackend runs shm ranks whose transports say they sit on the hosts
// given, as tcp's say under a launcher.
type hostsBackend struct{ hosts []string }

func (hostsBackend) Name() string { return "hosts-test" }

func (b hostsBackend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	return shm.Backend{}.Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		return body(ctx, hostsTransport{Transport: t, hosts: b.hosts})
	})
}

type hostsTransport struct {
	backends.Transport
	hosts []string
}

func (h hostsTransport) Hosts() []string { return h.hosts }

var hostsTest = hostsBackend{hosts: []string{"a", "a", "b", "b"}}

func init() { backends.Register(hostsTest) }

// TestTopologyAuto derives two servers of two ranks from the ranks' hosts,
// runs hier on them, and reports it.
func TestTopologyAuto(t *testing.T) {
	p := smallPlan()
	p.Backend, p.Ranks, p.TopologyAuto = hostsTest.Name(), 4, true
	p.Ops, p.Algo = []coll.Op{coll.AllReduce, coll.AllGather, coll.ReduceScatter}, "hier"
	p.LinkInterGBps, p.LinkInterSource = 1, "given"
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.header.Topology, "2 servers x 2 ranks") || !strings.Contains(c.header.Topology, "--topology auto") {
		t.Errorf("header topology %q", c.header.Topology)
	}
	if c.header.LinkRule != "across servers, the world: against the link between servers" {
		t.Errorf("header link rule %q", c.header.LinkRule)
	}
	for _, r := range c.records {
		if r.Wrong != 0 || r.Algo != "hier" {
			t.Errorf("%s %d B: %d wrong with %s", r.Op, r.Bytes, r.Wrong, r.Algo)
		}
		if want := r.BusBW / 1; math.Abs(r.Util-want) > 1e-12 {
			t.Errorf("%s: util %v against the 1 GB/s link between servers, want %v", r.Op, r.Util, want)
		}
	}
}
