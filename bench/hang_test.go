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
	timeout := fmt.Errorf("step 1: still waiting to receive from rank 2: %w", backends.ErrTimeout)
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
			call(0, 8, "gather(fp64, 21, root 0)", fmt.Errorf("still waiting to receive from rank 1: %w", errors.New("context canceled"))),
			call(2, 7, "allreduce(fp32, 64, sum)", fmt.Errorf("step 0: still waiting to send to rank 0: %w", errors.New("context canceled"))),
			call(3, 6, "barrier", errors.New("context canceled")),
		), []string{
			"op #7 allreduce(fp32, 64, sum) timed out",
			"still in it: rank 1 (step 1: still waiting to receive from rank 2), rank 2 (step 0: still waiting to send to rank 0)",
			"finished it: rank 0 (now in op #8 gather(fp64, 21, root 0))",
			"had not reached it: rank 3 (in op #6 barrier)",
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
