package bench

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/coll"
)

// hangReport turns the error of a run in which an op timed out into one
// that says where every rank was: which ranks were still in the op and
// what each was waiting for, which had finished it, and which had not
// reached it. Backends that host every rank (shm) hand over each rank's
// error joined together; from others only the ranks this process hosts
// are known. Other errors are returned as they are.
func hangReport(err error) error {
	if !errors.Is(err, backends.ErrTimeout) {
		return err
	}
	first := err
	var parts []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts = j.Unwrap()
		if len(parts) > 0 {
			first = parts[0]
		}
	} else {
		parts = []error{err}
	}
	var calls []*coll.CallError
	var timedOut *coll.CallError
	var timedOutErr error // the part of err that timedOut came from
	var notes []string    // parts that are no rank's call: "ranks 4-7 had finished"
	for i, p := range parts {
		var ce *coll.CallError
		if !errors.As(p, &ce) {
			if i > 0 {
				notes = append(notes, p.Error())
			}
			continue
		}
		calls = append(calls, ce)
		if errors.Is(ce, backends.ErrTimeout) && (timedOut == nil || faultScore(ce) > faultScore(timedOut)) {
			timedOut, timedOutErr = ce, p // an injected fault's own error first
		}
	}
	if timedOut == nil || len(calls) < 2 {
		return err
	}
	if errors.Is(timedOut, inject.ErrInjected) {
		// A fault of --inject held the op past its time limit: its own
		// error leads, not a wait it caused elsewhere.
		first = timedOutErr
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].Rank < calls[j].Rank })
	// Ranks still in the op say each what it waited for, up to
	// maxHangDetails of them; ranks elsewhere are grouped by the op they
	// were in, as ranges: the report stays one short line at 4096 ranks.
	var in []int
	var details []string
	var past, before rankGroups
	for _, ce := range calls {
		switch {
		case ce.Seq == timedOut.Seq && errors.Is(ce, inject.ErrInjected):
			in = append(in, ce.Rank)
			if len(details) < maxHangDetails {
				details = append(details, fmt.Sprintf("rank %d (held by --inject)", ce.Rank))
			}
		case ce.Seq == timedOut.Seq:
			in = append(in, ce.Rank)
			if len(details) < maxHangDetails {
				details = append(details, fmt.Sprintf("rank %d (%s)", ce.Rank, waitingOn(ce.Err)))
			}
		case ce.Seq > timedOut.Seq:
			past.add(ce.Rank, fmt.Sprintf("now in op #%d %s", ce.Seq, ce.Call))
		default:
			before.add(ce.Rank, fmt.Sprintf("in op #%d %s", ce.Seq, ce.Call))
		}
	}
	stillIn := "none"
	if len(in) > 0 {
		stillIn = strings.Join(details, ", ")
		if len(in) > len(details) {
			list := backends.RankList(in)
			if !strings.HasSuffix(list, " in all)") { // a long list counts its ranks itself
				list = fmt.Sprintf("%s (%d ranks)", list, len(in))
			}
			stillIn = fmt.Sprintf("%s: %s, and %d more", list, stillIn, len(in)-len(details))
		}
	}
	report := fmt.Sprintf("op #%d %s timed out; still in it: %s", timedOut.Seq, timedOut.Call, stillIn)
	if len(past.order) > 0 {
		report += "; finished it: " + past.String()
	}
	if len(before.order) > 0 {
		report += "; had not reached it: " + before.String()
	}
	for _, n := range notes {
		report += "; " + n
	}
	return fmt.Errorf("%w; %s", first, report)
}

// faultScore ranks the calls a hang report may lead with: the call of the
// rank a fault of --inject held, which tells it first-hand (2); another
// call that fault failed, as a peer's receive from the held rank (1); any
// other (0).
func faultScore(ce *coll.CallError) int {
	switch rank, ok := inject.HeldRank(ce); {
	case ok && rank == ce.Rank:
		return 2
	case errors.Is(ce, inject.ErrInjected):
		return 1
	}
	return 0
}

// maxHangDetails is how many ranks still in a timed-out op the hang report
// describes one by one.
const maxHangDetails = 8

// rankGroups gathers ranks by what they were doing, in the order the
// doings were first seen.
type rankGroups struct {
	order []string
	ranks map[string][]int
}

func (g *rankGroups) add(rank int, doing string) {
	if g.ranks == nil {
		g.ranks = map[string][]int{}
	}
	if _, ok := g.ranks[doing]; !ok {
		g.order = append(g.order, doing)
	}
	g.ranks[doing] = append(g.ranks[doing], rank)
}

// String is "rank 0 (now in op #8 gather(...)), ranks 4-9 (now in op #9
// barrier)", at most maxHangDetails groups, then a count of the rest.
func (g rankGroups) String() string {
	var parts []string
	rest := 0
	for i, doing := range g.order {
		if i == maxHangDetails {
			rest = len(g.order) - i
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", backends.RankList(g.ranks[doing]), doing))
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("and ranks in %d other ops", rest))
	}
	return strings.Join(parts, ", ")
}

// waitingOn returns from a rank's error the step it was in and what it
// was still waiting for, "reduce-scatter step 1: still waiting to receive
// from rank 3", without the error the wait ended with; an error of
// another kind whole.
func waitingOn(err error) string {
	var stuck *coll.StuckError
	if !errors.As(err, &stuck) {
		return err.Error()
	}
	// The steps that wrapped the wait, then what it waited for.
	s := err.Error()
	i := strings.LastIndex(s, stuck.Error())
	if i < 0 {
		return s
	}
	return s[:i] + "still waiting to " + strings.Join(stuck.Pending, ", ")
}
