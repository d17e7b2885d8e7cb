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

// hostsBackend runs shm ranks whose transports say they sit on the hosts
// given, as tcp's say under a launcher.
type hostsBackend struct{ hosts []string }

func (hostsBackend) Name() string { return "hosts-test" }

func (hostsBackend) Capabilities() backends.Caps {
	c := shm.Backend{}.Capabilities()
	c.Hosts = true
	return c
}

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
