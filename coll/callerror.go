package coll

import "fmt"

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
