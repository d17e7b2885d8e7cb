package isolate

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: a live search
// ends every rank's measurements, those cut at their deadline included.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cutBackend is shm with the links of one host's ranks to every other
// host cut once the first measurement touches them: from then on their
// sends and receives never complete, as over a link taken down mid-search.
// The messages of a rank still in the barrier before the search pass:
// the first ranks out of a barrier begin measuring while the last still
// wait for its messages, and a link cut then is one down before the
// search, which the world could not meet (and the search fails, as it
// should).
type cutBackend struct {
	per, bad int         // ranks per host, the host cut
	down     atomic.Bool // set by the first measurement message of the bad host
}

func (b *cutBackend) Name() string                { return "isolate-cut" }
func (b *cutBackend) Capabilities() backends.Caps { return shm.Backend{}.Capabilities() }
func (b *cutBackend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	return shm.Backend{}.Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		return body(ctx, &cutTransport{Transport: t, b: b})
	})
}

var cut = &cutBackend{per: 2, bad: 2}

func init() { backends.Register(cut) }

type cutTransport struct {
	backends.Transport
	b    *cutBackend
	past bool // this rank began a call after its first, the barrier
}

// cuts reports whether a message of n bytes between this rank and peer
// is lost: the bad host's cross-host links, once a message of a
// measurement's size has tried them.
func (c *cutTransport) cuts(peer, n int) bool {
	me, them := c.Rank()/c.b.per, peer/c.b.per
	if me == them || (me != c.b.bad && them != c.b.bad) {
		return false
	}
	if !c.past {
		return false
	}
	if n >= 1024 {
		c.b.down.Store(true)
	}
	return c.b.down.Load()
}

func (c *cutTransport) Send(peer int, buf []byte) backends.Request {
	if c.cuts(peer, len(buf)) {
		return lost{}
	}
	return c.Transport.Send(peer, buf)
}

func (c *cutTransport) Recv(peer int, buf []byte) backends.Request {
	if c.cuts(peer, len(buf)) {
		return lost{}
	}
	return c.Transport.Recv(peer, buf)
}

func (c *cutTransport) RecvReduce(peer int, dst, acc []byte, f dtype.ReduceFunc) backends.Request {
	if c.cuts(peer, len(dst)) {
		return lost{}
	}
	return c.Transport.RecvReduce(peer, dst, acc, f)
}

func (c *cutTransport) BeginCall(call backends.Call) {
	if call.Seq >= 2 {
		c.past = true
	}
	if tg, ok := c.Transport.(backends.CallTagger); ok {
		tg.BeginCall(call)
	}
}

func (c *cutTransport) DropLink(peer int, err error) {
	if d, ok := c.Transport.(backends.LinkDropper); ok {
		d.DropLink(peer, err)
	}
}

// lost is a message on a cut link: it waits until its deadline.
type lost struct{}

func (lost) Wait(ctx context.Context) error {
	<-ctx.Done()
	return backends.ContextError(ctx)
}

func liveOptions(backend string, ranks, per int, limit time.Duration) LiveOptions {
	o := DefaultLiveOptions()
	o.Backend, o.Ranks, o.PerHost, o.Timeout = backend, ranks, per, limit
	o.Bytes, o.Iters, o.Warmup = 256<<10, 5, 1
	return o
}

// TestLiveHealthy searches 4 hosts of 2 ranks on shm: every pair and
// group measured, every rank heard from, and every rail checked.
func TestLiveHealthy(t *testing.T) {
	o := liveOptions("shm", 8, 2, time.Minute)
	rep, err := RunLive(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Hosts) != 4 || len(rep.Pairs) != 6 || len(rep.Groups) != 2 || rep.Rounds != 3 {
		t.Fatalf("%d hosts, %d pairs, %d groups, %d rounds; want 4, 6, 2, 3", len(rep.Hosts), len(rep.Pairs), len(rep.Groups), rep.Rounds)
	}
	for _, p := range rep.Pairs {
		if p.Verdict == Failed || math.IsNaN(p.Figure) || p.Figure <= 0 {
			t.Errorf("pair %s - %s: %s %v %v", p.A, p.B, p.Verdict, p.Figure, p.Failures)
		}
	}
	for _, g := range rep.Groups {
		if g.Failure != "" || !(g.Figure > 0) || g.Ranks != 4 {
			t.Errorf("group %v: %v GB/s, %d ranks, %q", g.Hosts, g.Figure, g.Ranks, g.Failure)
		}
	}
	if len(rep.Unreported) > 0 {
		t.Errorf("unreported: %v", rep.Unreported)
	}
}

// TestLiveCutHost cuts host2's links at its first measurement: its three
// pairs fail by their limits, it is named, the other pairs are measured,
// its group fails and is explained by it, and the search ends.
func TestLiveCutHost(t *testing.T) {
	// A limit that healthy measurements of 256 KiB meet on a loaded host
	// under the race detector (2 s did not, once).
	limit := 5 * time.Second
	o := liveOptions(cut.Name(), 8, 2, limit)
	cut.down.Store(false) // up again for each run of the test (-count)
	began := time.Now()
	rep, err := RunLive(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// Healthy pairs of goroutines on a loaded host may differ by 4x and
	// be called slow; host2 must come first, failed with all its peers,
	// and no other pair may fail.
	hosts, _, _ := rep.Named()
	if len(hosts) == 0 || hosts[0].Name != "host2" || hosts[0].Failed != 3 {
		t.Fatalf("named hosts %v, want host2 first, failed with its 3 peers:\n%s", hosts, text(t, rep))
	}
	for _, p := range rep.Pairs {
		involved := p.A == "host2" || p.B == "host2"
		if involved != (p.Verdict == Failed) {
			t.Errorf("pair %s - %s: %s %v", p.A, p.B, p.Verdict, p.Failures)
		}
		if involved && !strings.Contains(strings.Join(p.Failures, ""), "timed out") {
			t.Errorf("pair %s - %s failed for %v, want its limit", p.A, p.B, p.Failures)
		}
	}
	for _, g := range rep.Groups {
		with := strings.Contains(strings.Join(g.Hosts, ","), "host2")
		if with != (g.Verdict == Failed) || with && (g.Named || !strings.Contains(g.Explained, "host2 named")) {
			t.Errorf("group %v: %s, named %v, explained by %q", g.Hosts, g.Verdict, g.Named, g.Explained)
		}
	}
	if len(rep.Unreported) != 2 {
		t.Errorf("unreported %v, want host2's two ranks", rep.Unreported)
	}
	// 3 rounds and 1 level of groups, each within its limit, and the
	// results twice (after the pairs, at the end) within one more each.
	if took, bound := time.Since(began), 6*limit+10*time.Second; took > bound {
		t.Errorf("the search took %v, more than its limits allow (%v)", took, bound)
	}
}

func text(t *testing.T, r *LiveReport) string {
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// stopBackend is shm that stops the run (as a signal would) once every
// rank has begun its second sendrecv measurement: every rank is then done
// with the first round, and the last to begin is in the second.
type stopBackend struct {
	cancel  context.CancelCauseFunc
	ranks   int
	begunMu sync.Mutex
	begun   map[int]int // by rank: sendrecv measurements begun; guarded by begunMu
}

func (b *stopBackend) Name() string                { return "isolate-stop" }
func (b *stopBackend) Capabilities() backends.Caps { return shm.Backend{}.Capabilities() }
func (b *stopBackend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	return shm.Backend{}.Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		return body(ctx, &sendRecvHook{Transport: t, on: b.began})
	})
}

var stopper = &stopBackend{}

func init() { backends.Register(stopper) }

// began counts a sendrecv measurement begun by rank and stops the run
// once every rank has begun its second.
func (b *stopBackend) began(rank int) {
	b.begunMu.Lock()
	defer b.begunMu.Unlock()
	b.begun[rank]++
	second := 0
	for _, n := range b.begun {
		if n >= 2 {
			second++
		}
	}
	if second == b.ranks {
		b.cancel(errors.New("SIGINT received"))
	}
}

// sendRecvHook is a transport that calls on with its rank as each
// sendrecv measurement (the call of Seq 1) begins, then tags the call as
// the transport beneath it does.
type sendRecvHook struct {
	backends.Transport
	on func(rank int)
}

func (s *sendRecvHook) BeginCall(call backends.Call) {
	if call.Op == uint8(coll.SendRecv) && call.Seq == 1 {
		s.on(s.Rank())
	}
	if tg, ok := s.Transport.(backends.CallTagger); ok {
		tg.BeginCall(call)
	}
}

// TestLiveStopped stops the search in its second round: the first
// round's two pairs are reported as measured, nothing else is in the
// report (neither failed nor named), and the report says why.
func TestLiveStopped(t *testing.T) {
	o := liveOptions(stopper.Name(), 4, 1, time.Minute)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopper.cancel, stopper.ranks, stopper.begun = cancel, o.Ranks, map[int]int{}
	rep, err := RunLive(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != 1 || rep.Slots != 4 || rep.Stopped != "SIGINT received" {
		t.Fatalf("ran %d of %d slots, stopped %q; want 1 of 4, SIGINT received", rep.Ran, rep.Slots, rep.Stopped)
	}
	if len(rep.Pairs) != 2 || len(rep.Groups) != 0 {
		t.Errorf("%d pairs, %d groups; want round 1's 2 pairs only:\n%s", len(rep.Pairs), len(rep.Groups), text(t, rep))
	}
	for _, p := range rep.Pairs {
		if p.Verdict == Failed || !(p.Figure > 0) {
			t.Errorf("pair %s - %s: %s %v", p.A, p.B, p.Verdict, p.Failures)
		}
	}
	if !strings.Contains(text(t, rep), "stopped (SIGINT received) after 1 of the search's 4 slots") {
		t.Errorf("the report does not say it stopped:\n%s", text(t, rep))
	}
}
