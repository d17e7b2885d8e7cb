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
	for _, p := range parts {
		var ce *coll.CallError
		if !errors.As(p, &ce) {
			continue
		}
		calls = append(calls, ce)
		if errors.Is(ce, backends.ErrTimeout) &&
			(timedOut == nil || errors.Is(ce, inject.ErrInjected) && !errors.Is(timedOut, inject.ErrInjected)) {
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
	var in, past, before []string
	for _, ce := range calls {
		switch {
		case ce.Seq == timedOut.Seq && errors.Is(ce, inject.ErrInjected):
			in = append(in, fmt.Sprintf("rank %d (held by --inject)", ce.Rank))
		case ce.Seq == timedOut.Seq:
			in = append(in, fmt.Sprintf("rank %d (%s)", ce.Rank, waitingOn(ce.Err)))
		case ce.Seq > timedOut.Seq:
			past = append(past, fmt.Sprintf("rank %d (now in op #%d %s)", ce.Rank, ce.Seq, ce.Call))
		default:
			before = append(before, fmt.Sprintf("rank %d (in op #%d %s)", ce.Rank, ce.Seq, ce.Call))
		}
	}
	report := fmt.Sprintf("op #%d %s timed out; still in it: %s", timedOut.Seq, timedOut.Call, listOrNone(in))
	if len(past) > 0 {
		report += "; finished it: " + strings.Join(past, ", ")
	}
	if len(before) > 0 {
		report += "; had not reached it: " + strings.Join(before, ", ")
	}
	return fmt.Errorf("%w; %s", first, report)
}

// waitingOn extracts from a rank's error the step it was in and what it
// was still waiting for: "reduce-scatter step 1: still waiting to receive
// from rank 3".
func waitingOn(err error) string {
	s := err.Error()
	if i := strings.Index(s, "still waiting to "); i >= 0 {
		if j := strings.Index(s[i:], ": "); j >= 0 {
			return s[:i+j]
		}
	}
	return s
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
