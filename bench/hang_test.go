package bench

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
)

func TestHangReport(t *testing.T) {
	timeout := fmt.Errorf("step 1: %w", &coll.StuckError{Pending: []string{"receive from rank 2"}, Err: backends.ErrTimeout})
	call := func(rank int, seq uint64, sig string, err error) error {
		return &coll.CallError{Rank: rank, Seq: seq, Call: sig, Algo: "ring", Err: err}
	}
	tests := []struct {
		name string
		err  error
		want []string // in order
	}{
		{"not a timeout", errors.New("boom"), []string{"boom"}},
		{"every rank placed", errors.Join(
			call(1, 7, "allreduce(fp32, 64, sum)", timeout),
			call(0, 8, "gather(fp64, 21, root 0)", fmt.Errorf("%w", &coll.StuckError{Pending: []string{"receive from rank 1"}, Err: errors.New("context canceled")})),
			call(2, 7, "allreduce(fp32, 64, sum)", fmt.Errorf("step 0: %w", &coll.StuckError{Pending: []string{"send to rank 0"}, Err: errors.New("context canceled")})),
			call(3, 6, "barrier", errors.New("context canceled")),
		), []string{
			"op #7 allreduce(fp32, 64, sum) timed out",
			"still in it: rank 1 (step 1: still waiting to receive from rank 2), rank 2 (step 0: still waiting to send to rank 0)",
			"finished it: rank 0 (now in op #8 gather(fp64, 21, root 0))",
			"had not reached it: rank 3 (in op #6 barrier)",
		}},
		// A backend's own notes on ranks that were in no call (shm: a rank
		// stopped as it faulted in buffers returns the first error again)
		// follow the report; the first error is not repeated as a rank.
		{"notes of ranks in no call", errors.Join(
			call(2, 1, "allreduce(fp32, 64, sum)", timeout),
			call(1, 1, "allreduce(fp32, 64, sum)", timeout),
			errors.New("rank 0 was stopped outside an op when the first failed"),
			errors.New("rank 3 had finished"),
		), []string{
			"still in it: rank 1 (step 1: still waiting to receive from rank 2), rank 2 (step 1",
			"; rank 0 was stopped outside an op when the first failed; rank 3 had finished",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hangReport(tt.err).Error()
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("report %q lacks %q (in order)", got, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestHangReportBounded: at 4096 ranks the report names ranges of ranks and
// describes a few, in a line of bounded length (it listed every rank, 385
// KB).
func TestHangReportBounded(t *testing.T) {
	const n = 4096
	var parts []error
	for r := range n {
		seq, err := uint64(5), error(fmt.Errorf("step 3: %w", &coll.StuckError{Pending: []string{fmt.Sprintf("receive from rank %d", (r+n-1)%n)}, Err: backends.ErrTimeout}))
		switch {
		case r%512 == 7: // a few ahead, in two different ops
			seq, err = uint64(6+r%1024/512), errors.New("context canceled")
		case r >= 4000:
			seq, err = 4, errors.New("context canceled")
		}
		parts = append(parts, &coll.CallError{Rank: r, Seq: seq, Call: fmt.Sprintf("op%d", seq), Algo: "ring", Err: err})
	}
	got := hangReport(errors.Join(parts...)).Error()
	if len(got) > 1500 {
		t.Errorf("report of %d bytes: %.300q...", len(got), got)
	}
	for _, w := range []string{
		"op #5 op5 timed out; still in it: ranks 0-6, 8-518, 520-1030, ",
		"(3992 ranks): rank 0 (step 3: still waiting to receive from rank 4095), rank 1 (",
		", and 3984 more",
		"finished it: ranks 7, 1031, 2055, 3079 (now in op #6 op6), ranks 519, 1543, 2567, 3591 (now in op #7 op7)",
		"had not reached it: ranks 4000-4095 (in op #4 op4)",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("report lacks %q:\n%s", w, got)
		}
	}
}
