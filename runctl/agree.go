package runctl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// Ranks that are processes (tcp, mpi) each read their own command line and
// environment. Before the first op they agree on the plan: rank 0 sends
// the fields that decide which calls a rank makes (a sweep's plan, a
// scenario's steps), every
// rank compares them with its own, and rank 0 sends back the verdict. On a
// difference every rank stops with the same error, naming the first field
// that differs and the ranks, rather than running a sweep of its own and
// leaving rank 0 with part of one.

// ErrPlanMismatch is the error of ranks that do not agree on the plan.
var ErrPlanMismatch = errors.New("the ranks do not agree on the plan")

// Sizes of the agreement's messages: rank 0's fields, one rank's first
// difference, and the verdict. Longer texts are cut, never refused.
const (
	agreeFieldsMax  = 64 << 10
	agreeSlotMax    = 512
	agreeVerdictMax = 1024
)

// NeedsAgreement reports whether the ranks of a world of n on b read
// their plans apart: on a backend whose ranks a launcher may start (one
// process per rank), with more than one rank. A nil b needs none.
func NeedsAgreement(b backends.Backend, n int) bool {
	if b == nil || n < 2 {
		return false
	}
	_, ok := b.(backends.Launched)
	return ok
}

// AgreeOn runs the agreement on fields over t, with a communicator of its
// own, so that no fault injected into the measured ops and no count of
// their calls is touched, each call within timeout. Every rank returns the
// same ErrPlanMismatch error on a difference; an error of the exchange
// itself is returned as it is.
func AgreeOn(ctx context.Context, t backends.Transport, timeout time.Duration, mine []string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	comm := coll.NewComm(t)
	rank, n := t.Rank(), t.Size()

	// Rank 0's fields to every rank.
	buf := make([]byte, agreeFieldsMax)
	if rank == 0 {
		putText(buf, strings.Join(mine, "\n"))
	}
	if err := bytesCall(ctx, comm, coll.Broadcast, buf, buf); err != nil {
		return fmt.Errorf("agreeing on the plan: %w", err)
	}
	theirs := strings.Split(getText(buf), "\n")

	// Every rank's first difference to rank 0.
	slot := make([]byte, agreeSlotMax)
	putText(slot, FirstDifference(theirs, mine))
	var slots []byte
	if rank == 0 {
		slots = make([]byte, n*agreeSlotMax)
	}
	if err := bytesCall(ctx, comm, coll.Gather, slot, slots); err != nil {
		return fmt.Errorf("agreeing on the plan: %w", err)
	}

	// The verdict to every rank, and a barrier, so that no rank ends the
	// world before every rank has the verdict.
	verdict := make([]byte, agreeVerdictMax)
	if rank == 0 {
		putText(verdict, mismatchVerdict(slots, n))
	}
	if err := bytesCall(ctx, comm, coll.Broadcast, verdict, verdict); err != nil {
		return fmt.Errorf("agreeing on the plan: %w", err)
	}
	v := getText(verdict)
	berr := comm.Barrier(ctx)
	if v != "" {
		return fmt.Errorf("%w: %s", ErrPlanMismatch, v)
	}
	if berr != nil {
		return fmt.Errorf("agreeing on the plan: %w", berr)
	}
	return nil
}

// bytesCall runs a broadcast or a gather (at rank 0) of len(send) bytes.
func bytesCall(ctx context.Context, comm *coll.Comm, op coll.Op, send, recv []byte) error {
	_, err := comm.Run(ctx, coll.Auto, &coll.Args{Op: op, DType: dtype.Uint8, Count: len(send), Root: 0, Send: send, Recv: recv})
	return err
}

// FirstDifference returns "" when mine equals rank 0's fields, else the
// first field that differs, as this rank has it and as rank 0 does.
func FirstDifference(rank0, mine []string) string {
	for i := range max(len(rank0), len(mine)) {
		a, b := "(none)", "(none)"
		if i < len(rank0) {
			a = rank0[i]
		}
		if i < len(mine) {
			b = mine[i]
		}
		if a != b {
			return fmt.Sprintf("%s where rank 0 has %s", b, a)
		}
	}
	return ""
}

// mismatchVerdict is rank 0's verdict from every rank's first difference
// (slots, agreeSlotMax bytes each): "" when all agree, else the first rank
// that differs, what differs, and which ranks differ at all.
func mismatchVerdict(slots []byte, n int) string {
	var differ []int
	first := ""
	for r := range n {
		d := getText(slots[r*agreeSlotMax : (r+1)*agreeSlotMax])
		if d == "" {
			continue
		}
		if first == "" {
			first = fmt.Sprintf("rank %d has %s", r, d)
		}
		differ = append(differ, r)
	}
	if first == "" {
		return ""
	}
	return fmt.Sprintf("%s (ranks that differ from rank 0: %s); give every rank the same flags and variables", first, rankRanges(differ))
}

// rankRanges writes sorted ranks as ranges: "1-3,7".
func rankRanges(ranks []int) string {
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(ranks[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ranks[i], ranks[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// putText writes s into buf, length first (4 bytes), cut to fit.
func putText(buf []byte, s string) {
	s = s[:min(len(s), len(buf)-4)]
	binary.LittleEndian.PutUint32(buf, uint32(len(s)))
	copy(buf[4:], s)
}

// getText reads what putText wrote.
func getText(buf []byte) string {
	n := int(binary.LittleEndian.Uint32(buf))
	return string(buf[4 : 4+min(n, len(buf)-4)])
}
