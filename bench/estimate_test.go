package bench

import (
	"context"
	"github.com/hccl-test/hccl-test/backends"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/memguard"
	"github.com/hccl-test/hccl-test/units"
)

// peakResident returns this process's peak resident size since the last
// resetPeak (VmHWM), or false when the system does not say.
func peakResident(t *testing.T) (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// resetPeak makes the peak resident size the current one.
func resetPeak() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// TestMemoryEstimateCovers runs small plans on shm, probe and calibration
// included, and checks that what the process grew to stays within the
// estimate; and that the estimate is not absurdly above it.
func TestMemoryEstimateCovers(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Plan)
	}{
		{"probe and estimate.Calibration", func(p *Plan) { p.MinBytes, p.MaxBytes = 1<<10, 1<<10 }},
		{"large buffers", func(p *Plan) { p.MinBytes, p.MaxBytes, p.LinkSource, p.LinkGBps = 1<<20, 16<<20, "given", 10 }},
		{"scratch of a fine sweep", func(p *Plan) {
			p.Ops, p.Algo, p.LinkSource, p.LinkGBps = []coll.Op{coll.AllToAll}, "bruck", "given", 10
			p.MinBytes, p.MaxBytes, p.StepFactor = 1<<20, 8<<20, 1.05
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			p.Ranks, p.Iters, p.Warmup, p.Timeout = 4, 1, 0, 30*time.Second
			p.DTypes = []dtype.DType{dtype.FP32}
			tc.edit(&p)
			base, err := memguard.Resident()
			if err != nil || !resetPeak() {
				t.Skip("the system does not report resident sizes")
			}
			var c capture
			if _, err := Run(context.Background(), p, &c); err != nil {
				t.Fatal(err)
			}
			peak, ok := peakResident(t)
			if !ok {
				t.Skip("no VmHWM")
			}
			est := p.Memory()
			// The estimate counts a process of its own (processBytes);
			// this one was base before the run.
			grew := peak - base
			if grew > est.Total() {
				t.Errorf("the run grew the process by %s, more than its estimate of %s (%s)", units.HumanSize(grew), units.HumanSize(est.Total()), est)
			}
			if est.Total() > 8*grew+256<<20 {
				t.Errorf("estimate %s for a run that grew by %s", units.HumanSize(est.Total()), units.HumanSize(grew))
			}
			t.Logf("grew %s, estimate %s: %s", units.HumanSize(grew), units.HumanSize(est.Total()), est)
		})
	}
}

// TestMemoryParts checks what the estimate counts, part by part.
func TestMemoryParts(t *testing.T) {
	part := func(e MemoryEstimate, name string) int64 {
		for _, p := range e.Parts {
			if p.Name == name {
				return p.Bytes
			}
		}
		return 0
	}
	p := DefaultPlan()
	p.Ranks, p.MinBytes, p.MaxBytes = 512, 1024, 1024
	e := p.Memory()
	if got, want := part(e, "link probe"), int64(512*2*(1<<20)); got != want {
		t.Errorf("-p 512: link probe %d, want %d (1 MiB twice a rank)", got, want)
	}
	if got := part(e, "estimate.Calibration"); got != 512*2*(256<<10) {
		t.Errorf("-p 512: estimate.Calibration %d, want 256 KiB twice a rank", got)
	}
	if e.Total() > 4<<30 {
		t.Errorf("-p 512 -e 1K needs %s: the probe and estimate.Calibration should shrink", units.HumanSize(e.Total()))
	}
	p.LinkSource, p.LinkGBps, p.Algo = "given", 10, "ring"
	if e := p.Memory(); part(e, "link probe") != 0 || part(e, "estimate.Calibration") != 0 {
		t.Errorf("a given link and algorithm still count a probe or estimate.Calibration: %s", e)
	}
	for _, tc := range []struct {
		ranks int
		probe int64
		cal   int64
	}{{2, 32 << 20, 4 << 20}, {16, 32 << 20, 4 << 20}, {32, 16 << 20, 4 << 20}, {512, 1 << 20, 256 << 10}, {4096, 128 << 10, 64 << 10}} {
		if got := probeSize(tc.ranks); got != tc.probe {
			t.Errorf("probeSize(%d) = %d, want %d", tc.ranks, got, tc.probe)
		}
		if got, _ := calSizes(tc.ranks); got != tc.cal {
			t.Errorf("calSizes(%d) = %d, want %d", tc.ranks, got, tc.cal)
		}
	}
}

// TestMemoryRefused checks that a run that would not fit is refused
// before it starts, naming the part that takes most and what to change.
func TestMemoryRefused(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Plan)
		want []string
	}{
		{"buffers", func(p *Plan) { p.MaxBytes = 1 << 40 }, []string{"MaxBytes 1099511627776", "sweep buffers", "smaller MaxBytes"}},
		{"probe", func(p *Plan) { p.Ranks, p.Algo = 4096, "ring"; p.MemLimit = 600 << 20 }, []string{"LinkGBps auto", "link probe", "LinkGBps hccs"}},
		{"links", func(p *Plan) { p.Ranks, p.Ops, p.LinkSource, p.LinkGBps = 4096, []coll.Op{coll.AllToAll}, "given", 1 }, []string{"Ranks 4096", "links"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			p.MinBytes, p.MaxBytes, p.MemLimit = 1024, 1024, 8<<30
			tc.edit(&p)
			err := p.Validate()
			if err == nil {
				t.Fatalf("accepted a plan of %s with %s available", units.HumanSize(p.Memory().Total()), units.HumanSize(p.MemLimit))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: lacks %q", err, w)
				}
			}
		})
	}
}

// TestDryRunMemory checks that --dry-run prints the whole estimate, part
// by part: for -p 512 -b 1K -e 1K, which grew to 24 GB while the dry run
// said 3 KiB a rank, the probe and the calibration are there.
func TestDryRunMemory(t *testing.T) {
	p := DefaultPlan()
	p.Ranks, p.MinBytes, p.MaxBytes, p.Iters, p.Warmup = 512, 1024, 1024, 1, 0
	var b strings.Builder
	if err := p.DryRun(&b); err != nil {
		t.Fatal(err)
	}
	want := "# memory: about " + units.HumanSize(p.Memory().Total()/512) + " per rank, " + units.HumanSize(p.Memory().Total()) + " for the 512 ranks on this machine: "
	for _, w := range []string{want, "link probe 1.0GiB", "estimate.Calibration 256.0MiB", "sweep buffers", "links", "ranks' goroutines"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("dry run lacks %q:\n%s", w, b.String())
		}
	}
}

// TestMemoryLinksFollowAlgorithms checks that the links part counts, for
// a rank, the peers of the algorithms the plan may run
// (coll.AlgoPeers, checked against the peers counted from the algorithms'
// messages in coll): on 1024 ranks of sim, auto picks twoshot from 32 MiB,
// whose rank talks to every rank on two levels and with payload, and to
// none where the call is timed for the world in closed form (one server,
// no payload); ring and rhd talk to a few; alltoall to every rank
// whatever is named; on a backend measured at the start auto counts at
// the op's usual peers.
func TestMemoryLinksFollowAlgorithms(t *testing.T) {
	const n = 1024
	part := func(p Plan, name string) int64 {
		for _, part := range p.Memory().Parts {
			if part.Name == name {
				return part.Bytes
			}
		}
		return 0
	}
	few, servers := coll.Op(0).Peers(n), Topology{Servers: n / 8, PerServer: 8}
	for _, tc := range []struct {
		backend   string
		ops       []coll.Op
		algo      string
		topo      Topology
		noPayload bool
		maxBytes  int64
		peers     int
	}{
		{"sim", []coll.Op{coll.AllReduce}, coll.Auto, servers, true, 1 << 28, n},
		{"sim", []coll.Op{coll.AllReduce}, coll.Auto, servers, true, 16 << 20, few}, // rhd up to 16 MiB
		{"sim", []coll.Op{coll.AllReduce}, coll.Auto, Topology{}, true, 1 << 28, few},
		{"sim", []coll.Op{coll.AllReduce}, coll.Auto, Topology{}, false, 1 << 28, n},
		{"sim", []coll.Op{coll.AllReduce}, "twoshot", Topology{}, true, 1 << 28, n},
		{"sim", []coll.Op{coll.AllReduce}, "ring,oneshot", servers, true, 1 << 28, n},
		{"sim", []coll.Op{coll.AllReduce}, "ring", servers, true, 1 << 28, few},
		{"sim", []coll.Op{coll.AllReduce}, "rhd", servers, true, 1 << 28, few},
		{"sim", []coll.Op{coll.AllGather, coll.AllToAll}, "ring", servers, true, 1 << 28, n},
		{"shm", []coll.Op{coll.AllReduce}, coll.Auto, Topology{}, false, 1 << 10, few},
		{"shm", []coll.Op{coll.AllReduce}, "auto,twoshot", Topology{}, false, 1 << 10, n},
		{"shm", []coll.Op{coll.AllGather}, coll.Auto, Topology{}, false, 1 << 10, few},
	} {
		p := DefaultPlan()
		p.Backend, p.Ranks, p.Ops, p.Algo, p.Topology, p.NoPayload = tc.backend, n, tc.ops, tc.algo, tc.topo, tc.noPayload
		p.MinBytes, p.MaxBytes = 1024, tc.maxBytes
		b, err := p.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		want := b.(backends.LinkMemory).LinkBytes(n, tc.peers) * n
		if got := part(p, "links"); got != want {
			t.Errorf("%s %v -a %s on %d ranks %+v, no payload %v, -e %d: links %s, want %s (%d peers a rank)",
				tc.backend, tc.ops, tc.algo, n, tc.topo, tc.noPayload, tc.maxBytes, units.HumanSize(got), units.HumanSize(want), tc.peers)
		}
		// A rank that posts to every peer at once holds a send's and a
		// receive's request for each.
		wantReqs := int64(0)
		if tc.peers > few {
			wantReqs = int64(2*tc.peers) * requestBytes * n
		}
		if got := part(p, "requests in flight"); got != wantReqs {
			t.Errorf("%s %v -a %s on %d ranks %+v: requests in flight %s, want %s",
				tc.backend, tc.ops, tc.algo, n, tc.topo, units.HumanSize(got), units.HumanSize(wantReqs))
		}
	}
}
