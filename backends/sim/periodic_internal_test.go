package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// serversProgram is a program of two levels on servers of p ranks: each
// round, every rank sends to the next rank of the world and to its place
// on the next server, receives (one of them reduced) from the ones before,
// and copies; lengths vary with the rank's place on its server and the
// round. Where not periodic, lengths vary with the server too (skew), or
// the second message goes to and comes from the rank in the same place
// on the server paired with the rank's by XOR (xor: on a periodic world
// its peers are renamed wrongly, its lengths not), or copies vary with
// the server (work).
func serversProgram(p, rounds int, notPeriodic string) func(t backends.Transport) error {
	skew, xor := notPeriodic == "skew", notPeriodic == "xor"
	return func(t backends.Transport) error {
		n, r := t.Size(), t.Rank()
		lw := t.(backends.LocalWorker)
		for k := range rounds {
			size := func(from int) int {
				s := 1000 + 4099*(from%p) + 777*k
				if skew {
					s += 13 * (from / p)
				}
				return s
			}
			a := t.Send((r+1)%n, make([]byte, size(r)))
			to, from := (r+p)%n, (r+n-p)%n
			if xor {
				to, from = r^p, r^p
			}
			b := t.Send(to, make([]byte, 2*size(r)))
			c := t.RecvReduce((r+n-1)%n, make([]byte, size((r+n-1)%n)), make([]byte, size((r+n-1)%n)), nil)
			d := t.Recv(from, make([]byte, 2*size(from)))
			if err := errors.Join(d.Wait(context.Background()), c.Wait(context.Background()), a.Wait(context.Background()), b.Wait(context.Background())); err != nil {
				return err
			}
			copied := size(r) * (1 + r%p)
			if notPeriodic == "work" {
				copied += 100 * (r / p)
			}
			lw.Copied(copied)
		}
		return nil
	}
}

// replayedStates replays w, as RunWorld does, from states alike on every
// server (rank r's clock, ports and gap depend on r%p), each rank having
// waited 7r ns, and returns every rank's state and time waited after it.
func replayedStates(t *testing.T, f *fabric, w *records, p int) ([]rankState, []time.Duration) {
	t.Helper()
	all := make([][]float64, f.size)
	for r := range all {
		l := time.Duration(r % p)
		all[r] = []float64{f64(311 * l), f64(7 * time.Duration(r)), f64(100 * l), f64(50 * l), f64(70 * l), f64(311 * l), f64(311 * l)}
	}
	for i := range w.traces {
		w.traces[i].pc = w.traces[i].ops[0]
	}
	for i := range w.reqs {
		q := &w.reqs[i]
		q.waited, q.booked, q.waiter = false, false, false
	}
	w.start(all)
	if ok, err := f.replay(context.Background(), w); !ok || err != nil {
		t.Fatalf("replay: %v, %v", ok, err)
	}
	out := w.outcome(all)
	states, waited := make([]rankState, f.size), make([]time.Duration, f.size)
	for r := range f.size {
		v := out[rankTimesLen*r:]
		states[r] = rankState{clock: dur(v[0]), issue: dur(v[2]), busy: [2]time.Duration{dur(v[3]), dur(v[4])}, in: [2]time.Duration{dur(v[5]), dur(v[6])}}
		waited[r] = dur(v[1])
	}
	return states, waited
}

// TestPeriodicRecordsMatchWhole: the records of one server's ranks
// replay to every rank's state and time waited, bit for bit, as the
// whole world's records do, on 6 servers of 4 ranks; a perturbed record
// (one message a byte longer, one copy free) does not, so the comparison
// sees a single message's cost; a program whose lengths or peers vary
// with the server is recorded whole; and records beyond the budget are refused,
// the periodic ones fitting where the whole world's do not.
func TestPeriodicRecordsMatchWhole(t *testing.T) {
	const n, p, rounds = 24, 4, 5
	links := LinkModel{PerServer: p, IntraAlpha: 1700 * time.Nanosecond, InterAlpha: 9100 * time.Nanosecond,
		IntraGBps: 23, InterGBps: 7, ReduceGBps: 9, CopyGBps: 13, Gap: 900 * time.Nanosecond}
	f, err := newFabric(n, links)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	record := func(prog func(backends.Transport) error, period int) *records {
		t.Helper()
		w, err := f.record(ctx, prog, period)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	prog := serversProgram(p, rounds, "")
	whole, per := record(prog, n), record(prog, p)
	if whole == nil || per == nil || whole.period != n || per.period != p || len(per.traces) != p {
		t.Fatalf("records: whole %v, periodic %v", whole != nil, per != nil)
	}
	if len(per.reqs)*(n/p) != len(whole.reqs) {
		t.Errorf("periodic records hold %d requests, the whole world's %d: want a sixth", len(per.reqs), len(whole.reqs))
	}
	wantS, wantW := replayedStates(t, f, whole, p)
	gotS, gotW := replayedStates(t, f, per, p)
	for r := range n {
		if gotS[r] != wantS[r] || gotW[r] != wantW[r] {
			t.Errorf("rank %d: periodic %+v waited %v, whole %+v waited %v", r, gotS[r], gotW[r], wantS[r], wantW[r])
		}
	}
	if wantS[n-1].clock == 0 || wantW[0] == 0 || wantW[p] == wantW[0] {
		t.Fatal("the replay moved no clock, or waited nothing")
	}

	perturb := []struct {
		name string
		do   func(w *records)
	}{
		{"a send a byte longer", func(w *records) {
			for i := range w.reqs {
				if w.reqs[i].send {
					w.reqs[i].n++
					return
				}
			}
		}},
		{"a copy free", func(w *records) {
			for i := len(w.ops) - 1; i >= 0; i-- {
				if w.ops[i].kind == opWork {
					w.ops[i].d = 0
					return
				}
			}
		}},
	}
	for _, pc := range perturb {
		w := record(prog, p)
		pc.do(w)
		s, wt := replayedStates(t, f, w, p)
		same := true
		for r := range n {
			same = same && s[r] == wantS[r] && wt[r] == wantW[r]
		}
		if same {
			t.Errorf("%s: the periodic replay still matches the whole world's", pc.name)
		}
	}

	for _, np := range []string{"skew", "xor", "work"} {
		if w := record(serversProgram(p, rounds, np), p); w == nil || w.period != n || len(w.traces) != n {
			t.Errorf("a program not periodic (%s): recorded for a period, want the whole world", np)
		}
	}

	defer func(b int) { replayBudget = b }(replayBudget)
	replayBudget = len(per.reqs)
	if w := record(prog, p); w == nil || w.period != p {
		t.Errorf("periodic records at a budget of their size: refused")
	}
	if w := record(prog, n); w != nil {
		t.Errorf("whole records of %d requests at a budget of %d: recorded", len(whole.reqs), replayBudget)
	}
	replayBudget = len(per.reqs) - 1
	if w := record(prog, p); w != nil {
		t.Errorf("periodic records of %d requests at a budget of %d: recorded", len(per.reqs), replayBudget)
	}
}

// TestPeriodicCheckStopsWithItsContext: the check of a periodic world's
// other ranks ends at the first rank after its context has, not at the
// end of the world.
func TestPeriodicCheckStopsWithItsContext(t *testing.T) {
	const n, p = 4096, 4
	f, err := newFabric(n, LinkModel{PerServer: p})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := 0
	prog := serversProgram(p, 2, "")
	_, err = f.record(ctx, func(tr backends.Transport) error {
		if ran++; ran == p+10 {
			cancel()
		}
		return prog(tr)
	}, p)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("record after the end: %v, want context.Canceled", err)
	}
	if ran != p+10 {
		t.Errorf("ran %d ranks' programs, want %d: the check went on after its context ended", ran, p+10)
	}
}
