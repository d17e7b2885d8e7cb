package bench

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/group"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/wallbound"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
)

// capture is a Sink that keeps everything.
type capture struct {
	header  results.Header
	records []results.Record
	summary results.Summary
	ended   bool
}

func (c *capture) Begin(h results.Header) error { c.header = h; return nil }
func (c *capture) Write(r results.Record) error { c.records = append(c.records, r); return nil }
func (c *capture) End(s results.Summary) error  { c.summary, c.ended = s, true; return nil }

func smallPlan() Plan {
	p := DefaultPlan()
	p.Ranks = 3
	p.Ops = coll.AllOps()
	p.DTypes = []dtype.DType{dtype.FP16, dtype.Int32}
	p.RedOps = []dtype.ReduceOp{dtype.Sum, dtype.Avg}
	p.MinBytes, p.MaxBytes, p.StepFactor = 64, 4096, 4
	p.Iters, p.Warmup = 3, 1
	p.Root = -1
	p.Placements = []Placement{OutOfPlace, InPlace}
	p.LinkGBps, p.LinkSource = 10, "given"
	p.Timeout = 20 * time.Second
	return p
}

func TestRunEveryCollective(t *testing.T) {
	p := smallPlan()
	var c capture
	sum, err := Run(context.Background(), p, &c)
	if err != nil {
		t.Fatal(err)
	}
	if !c.ended || len(c.records) != len(p.Rows()) || sum.Rows != len(p.Rows()) {
		t.Fatalf("got %d records (ended %v), want %d", len(c.records), c.ended, len(p.Rows()))
	}
	for _, r := range c.records {
		if r.Wrong != 0 {
			t.Errorf("%s %s %s %d B: %d wrong", r.Op, r.DType, r.RedOp, r.Bytes, r.Wrong)
		}
		if r.TimeUS <= 0 || r.MinUS > r.P50US || r.P50US > r.MaxUS || r.MaxUS <= 0 {
			t.Errorf("%s %d B: implausible times %+v", r.Op, r.Bytes, r)
		}
		if r.Algo == "" {
			t.Errorf("%s %d B: no algorithm named", r.Op, r.Bytes)
		}
		op, _ := coll.ParseOp(r.Op)
		if op.Desc().Variable() {
			// Its algbw is the traffic's (TestTrafficRecord).
			if !(r.AlgBW >= 0) || r.Imbalance < 1 {
				t.Errorf("%s: algbw %v, imbalance %v", r.Op, r.AlgBW, r.Imbalance)
			}
		} else if want := float64(r.Bytes) / (r.TimeUS * 1e-6) / 1e9; math.Abs(r.AlgBW-want) > 1e-9*want+1e-12 {
			t.Errorf("%s: algbw %v, want %v", r.Op, r.AlgBW, want)
		}
		if want := r.AlgBW * op.BusFactor(3); math.Abs(r.BusBW-want) > 1e-12 {
			t.Errorf("%s: busbw %v, want %v", r.Op, r.BusBW, want)
		}
		if want := r.BusBW / 10; math.Abs(r.Util-want) > 1e-12 {
			t.Errorf("%s: util %v, want %v", r.Op, r.Util, want)
		}
	}
	if sum.Wrong != 0 {
		t.Errorf("summary: %d wrong", sum.Wrong)
	}
}

func TestRunWithoutCheck(t *testing.T) {
	p := smallPlan()
	p.Ops, p.Check = []coll.Op{coll.AllReduce}, false
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.records {
		if r.Checked() {
			t.Fatalf("unchecked run reported %d wrong", r.Wrong)
		}
	}
}

func TestRunProbesLink(t *testing.T) {
	p := smallPlan()
	p.Ops, p.LinkSource, p.LinkGBps = []coll.Op{coll.AllReduce}, LinkAuto, 0
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if c.header.LinkGBps <= 0 || c.header.LinkSource == "" {
		t.Fatalf("auto link: %v GB/s from %q", c.header.LinkGBps, c.header.LinkSource)
	}
	for _, r := range c.records {
		if math.IsNaN(r.Util) || r.Util <= 0 {
			t.Fatalf("row without util: %+v", r)
		}
	}
}

// TestRunTimeout runs against a backend whose rank 1 never answers: the run
// must end with an error naming the op and a timeout, soon after the op
// timeout, and keep the summary.
func TestRunTimeout(t *testing.T) {
	p := smallPlan()
	p.Backend = "silent-rank-1"
	p.Ops = []coll.Op{coll.AllReduce}
	p.Timeout = 200 * time.Millisecond
	// "Soon after": the op timeout plus slack scaled from the same plan run
	// healthy on shm, now, on this host; a run that hangs fails at the bound.
	healthy := p
	healthy.Backend = "shm"
	base := wallbound.Baseline(func() {
		if _, err := Run(context.Background(), healthy, &capture{}); err != nil {
			t.Fatalf("the healthy run: %v", err)
		}
	})
	c, err := runWithin(t, p, base)
	if !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("got %v, want a timeout", err)
	}
	if !c.ended || c.summary.Err == nil {
		t.Fatal("footer not written with the error")
	}
}

// rankOneBackend is shm whose rank 1 runs rank1 in place of the rank's
// body: the test backends that make one rank misbehave.
type rankOneBackend struct {
	name  string
	rank1 func(ctx context.Context, t backends.Transport, body backends.RankFunc) error
}

// Registered once for the test binary: a test that registered them
// itself could not run twice (-count 2), the registry refusing a second
// one. silent-rank-1's rank 1 stops answering after its first row;
// stall-rank-1's never completes a send of stallBytes or more
// (watchrows_test.go).
func init() {
	backends.Register(rankOneBackend{"silent-rank-1", func(ctx context.Context, _ backends.Transport, _ backends.RankFunc) error {
		<-ctx.Done()
		return ctx.Err()
	}})
	backends.Register(rankOneBackend{"stall-rank-1", func(ctx context.Context, t backends.Transport, body backends.RankFunc) error {
		return body(ctx, stallTransport{t})
	}})
}

func (b rankOneBackend) Name() string { return b.name }

func (rankOneBackend) Capabilities() backends.Caps { return shm.Backend{}.Capabilities() }
func (b rankOneBackend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	return shm.Backend{}.Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		if t.Rank() == 1 {
			return b.rank1(ctx, t, body)
		}
		return body(ctx, t)
	})
}

func TestCountWrongCatchesCorruption(t *testing.T) {
	const n = 4
	for _, op := range coll.AllOps() {
		t.Run(op.String(), func(t *testing.T) {
			row := Row{Op: op, DType: dtype.BF16, Root: 1, Place: OutOfPlace, Count: 700}
			if op.Reduces() {
				row.RedOp = dtype.Max
			}
			row.Bytes = int64(row.Count * op.Blocks(n) * 2)
			if op.Desc().Variable() {
				// Uneven counts, every rank's output past element 650.
				cells := make([]int, n*n)
				for i := range cells {
					cells[i] = row.Count + 13*(i/n) + 7*(i%n)
				}
				var err error
				if row.Counts, err = coll.NewCounts(n, cells); err != nil {
					t.Fatal(err)
				}
			}
			pat := payload.PatternFor(row, n)
			w := shm.NewWorld(n)
			done := make(chan [2]int64, n)
			for r := range n {
				go func() {
					bp := &payload.BufferPool{}
					bp.A, bp.B = make([]byte, 8*row.Bytes), make([]byte, 8*row.Bytes)
					a := bp.Args(row, r, n)
					payload.FillInputs(a, pat, r)
					payload.Poison(a.Recv)
					_, err := coll.NewComm(w.Endpoint(r)).Run(context.Background(), coll.Auto, a)
					if err != nil {
						t.Error(err)
					}
					clean := payload.CountWrong(a, row, pat, r, n)
					a.Recv[2*100] ^= 1
					a.Recv[2*650+1] ^= 0x40
					done <- [2]int64{clean, payload.CountWrong(a, row, pat, r, n)}
				}()
			}
			for range n {
				res := <-done
				if res[0] != 0 {
					t.Errorf("correct output counted %d wrong", res[0])
				}
				if res[1] != 2 && !(res[1] == 0 && (op == coll.Reduce || op == coll.Gather)) {
					t.Errorf("2 corrupted elements counted as %d", res[1])
				}
			}
		})
	}
}

// tcpLike is a transport that neither lets receivers read the sender's
// buffer nor keeps a virtual clock, as tcp's: only Transport's methods of
// the one it wraps show.
type tcpLike struct{ backends.Transport }

// tcpHosts is tcpLike with its ranks' hosts, as tcp reports them.
type tcpHosts struct {
	tcpLike
	hosts []string
}

func (t tcpHosts) Hosts() []string { return t.hosts }

// procLike is a transport that reads senders' buffers and reports its
// ranks' hosts, as proc's does with every rank on one host.
type procLike tcpHosts

func (t procLike) Hosts() []string         { return t.hosts }
func (t procLike) ReadsSenderBuffer() bool { return true }

// TestWithTransport: a transport whose receivers read the sender's buffer
// (shm, also through a group or --inject's wrapper) makes the model's
// receive-and-reduce one pass and its ranks share this process's CPUs,
// or the host's when they are processes of one host (proc, whose rank
// processes each have GOMAXPROCS 1 when they outnumber the CPUs, as here);
// the simulated links do neither; on any other transport (tcp) the
// sender's CPU moves every message (SenderMoves), and ranks all on one
// host share its CPUs.
func TestWithTransport(t *testing.T) {
	if runtime.NumCPU() > 1 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	w := shm.NewWorld(2)
	simW, err := sim.NewWorld(2, sim.LinkModel{})
	if err != nil {
		t.Fatal(err)
	}
	member, err := group.New(w.Endpoint(0), []int{0})
	if err != nil {
		t.Fatal(err)
	}
	oneHost := tcpHosts{tcpLike{w.Endpoint(2)}, []string{"10.0.0.1", "10.0.0.1"}}
	tests := []struct {
		name        string
		tr          backends.Transport
		shared      bool
		senderMoves bool
		hostCPUs    bool // the ranks share the host's CPUs, not the process's
	}{
		{"shm", w.Endpoint(0), true, false, false},
		{"shm in a group", member, true, false, false},
		{"shm with --inject", inject.Wrap(w.Endpoint(1), inject.Spec{}, 1), true, false, false},
		{"sim", simW.Endpoint(0), false, false, false},
		{"tcp", tcpLike{w.Endpoint(2)}, false, true, false},
		{"tcp on one host", oneHost, false, true, true},
		{"tcp on one host with --inject", inject.Wrap(oneHost, inject.Spec{}, 1), false, true, true},
		{"tcp on two hosts", tcpHosts{tcpLike{w.Endpoint(2)}, []string{"10.0.0.1", "10.0.0.2"}}, false, true, false},
		{"proc on one host", procLike(oneHost), true, false, true},
		{"proc on one host with --inject", inject.Wrap(procLike(oneHost), inject.Spec{}, 1), true, false, true},
	}
	for _, tc := range tests {
		m := withTransport(coll.DefaultModel, tc.tr)
		if tc.shared && !tc.hostCPUs && (!m.Fused || m.Cores != runtime.GOMAXPROCS(0)) {
			t.Errorf("%s: Fused %v, Cores %d; want true and GOMAXPROCS (%d)", tc.name, m.Fused, m.Cores, runtime.GOMAXPROCS(0))
		}
		if !tc.shared && !tc.hostCPUs && (m.Fused || m.Cores != 0) {
			t.Errorf("%s: Fused %v, Cores %d; want false and 0", tc.name, m.Fused, m.Cores)
		}
		if tc.hostCPUs && (m.Fused != tc.shared || m.Cores != runtime.NumCPU()) {
			t.Errorf("%s: Fused %v, Cores %d; want %v and the host's CPUs (%d)", tc.name, m.Fused, m.Cores, tc.shared, runtime.NumCPU())
		}
		if m.SenderMoves != tc.senderMoves {
			t.Errorf("%s: SenderMoves %v, want %v", tc.name, m.SenderMoves, tc.senderMoves)
		}
	}
}

// TestRunCalibrates checks that auto's model is measured before the sweep
// and printed, that shm's receive-and-reduce counts as one pass, and that
// --stats gives every row a prediction.
func TestRunCalibrates(t *testing.T) {
	p := smallPlan()
	p.Ops, p.Stats = []coll.Op{coll.AllReduce}, true
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"alpha", "beta", "gamma fp16", "int32", "fused receive-reduce"} {
		if !strings.Contains(c.header.Model, want) {
			t.Errorf("header model %q lacks %q", c.header.Model, want)
		}
	}
	for _, r := range c.records {
		if !(r.ModelUS > 0) {
			t.Errorf("row without a prediction: %+v", r)
		}
	}
}

// runWithin runs p and returns what it wrote and its error, failing t if
// the run does not end within the bound that p's op timeout and a healthy
// run's time base (wallbound.Bound) give.
func runWithin(t *testing.T, p Plan, base time.Duration) (*capture, error) {
	t.Helper()
	var c capture
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), p, &c)
		done <- err
	}()
	select {
	case err := <-done:
		return &c, err
	case <-time.After(wallbound.Bound(p.Timeout, base)):
		t.Fatalf("no end %v after a %v op timeout (a healthy run takes %v)", wallbound.Bound(p.Timeout, base), p.Timeout, base)
	}
	return nil, nil
}
