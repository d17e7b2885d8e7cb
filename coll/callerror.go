package coll

import (
	"fmt"
	"strings"
)

// CallError is how a collective call fails on one rank: which rank, which
// call (its number on this rank, as mismatch errors count them, and its
// signature), the algorithm, and what went wrong. The harness reads it to
// report, when an op hangs, where every rank was.
type CallError struct {
	Rank int
	Seq  uint64 // the call's number on this rank, from 1
	Call string // its signature, as "allreduce(fp32, 1048576, sum)"
	Algo string
	Err  error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("%s (%s) rank %d, op #%d: %v", e.Call, e.Algo, e.Rank, e.Seq, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// StuckError is what a wait that its context ended (a timeout, a
// cancellation) returns: the requests still pending then, as their
// backends describe them ("receive from rank 3"), and the error the wait
// ended with. Callers that report hangs read Pending rather than parse
// the text.
type StuckError struct {
	Pending []string
	Err     error
}

func (e *StuckError) Error() string {
	return fmt.Sprintf("still waiting to %s: %v", strings.Join(e.Pending, ", "), e.Err)
}

func (e *StuckError) Unwrap() error { return e.Err }
