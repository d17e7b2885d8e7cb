package coll

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestMismatchedCalls makes one rank of three disagree with the others
// about a call, on both backends: every rank must end quickly (the world
// is torn down on the first error, as the harness does), and the error
// that ends the world must wrap ErrMismatch and name both sides.
func TestMismatchedCalls(t *testing.T) {
	const n, count = 3, 64
	allreduce := func(int) *Args {
		return &Args{Op: AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Count: count,
			Send: make([]byte, 4*count), Recv: make([]byte, 4*count)}
	}
	allgather := func(int) *Args {
		return &Args{Op: AllGather, DType: dtype.FP32, Count: count,
			Send: make([]byte, 4*count), Recv: make([]byte, 4*n*count)}
	}
	alltoallv := func(seed int) func(int) *Args {
		return func(int) *Args {
			cells := make([]int, n*n)
			for i := range cells {
				cells[i] = count + seed*i // one rank's differ from the others'
			}
			counts, err := NewCounts(n, cells)
			if err != nil {
				panic(err)
			}
			return &Args{Op: AllToAllV, DType: dtype.FP32, Count: count, Counts: counts,
				Send: make([]byte, 4*n*count*4), Recv: make([]byte, 4*n*count*4)}
		}
	}
	tests := []struct {
		name string
		// calls returns what rank r runs, in order; nil stands for a
		// barrier.
		calls func(r int) []func(int) *Args
		want  []string // in the first error, in both backends' wording
	}{
		{"different collective", func(r int) []func(int) *Args {
			if r == 1 {
				return []func(int) *Args{allgather}
			}
			return []func(int) *Args{allreduce}
		}, []string{"allgather(fp32", "allreduce(fp32", "as op #1"}},
		{"different count", func(r int) []func(int) *Args {
			if r == 1 {
				return []func(int) *Args{func(int) *Args {
					a := allreduce(0)
					a.Count = count / 2
					return a
				}}
			}
			return []func(int) *Args{allreduce}
		}, []string{"rank"}},
		{"different counts", func(r int) []func(int) *Args {
			if r == 1 {
				return []func(int) *Args{alltoallv(1)}
			}
			return []func(int) *Args{alltoallv(0)}
		}, []string{"alltoallv(fp32, counts #", "rank"}},
		{"skipped call", func(r int) []func(int) *Args {
			if r == 1 {
				return []func(int) *Args{allreduce}
			}
			return []func(int) *Args{nil, allreduce}
		}, []string{"barrier", "allreduce(fp32", "as op #1"}},
	}
	for _, backend := range []string{"shm", "tcp", "proc"} {
		for _, tt := range tests {
			t.Run(backend+"/"+tt.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), callHang)
				defer cancel()
				ts := call{ranks: n, backend: backend}.world(t, ctx)
				// The world ends on the first failure, as the harness's does.
				wctx, abort := context.WithCancelCause(ctx)
				defer abort(nil)
				errs := make([]error, n)
				var first error
				var once sync.Once
				var wg sync.WaitGroup
				for r := range n {
					wg.Go(func() {
						c := NewComm(ts[r])
						for _, mk := range tt.calls(r) {
							var err error
							if mk == nil {
								err = c.Barrier(wctx)
							} else {
								_, err = c.Run(wctx, Auto, mk(r))
							}
							if err != nil {
								errs[r] = err
								once.Do(func() { first = err })
								abort(err)
								if a, ok := ts[r].(interface{ Abort(error) }); ok {
									a.Abort(err)
								}
								return
							}
						}
					})
				}
				wg.Wait()
				t.Logf("first error: %v", first)
				// The rank that caught the mismatch fails with ErrMismatch;
				// over tcp its peer may fail first, with the reason the
				// catcher sent it in an abort frame.
				if !errors.Is(first, backends.ErrMismatch) && !strings.Contains(fmt.Sprint(first), "mismatched message") {
					t.Fatalf("first error %v, want ErrMismatch (all: %v)", first, errs)
				}
				for _, w := range tt.want {
					if !strings.Contains(first.Error(), w) {
						t.Errorf("first error %q lacks %q", first, w)
					}
				}
				for r, err := range errs {
					if err == nil {
						t.Errorf("rank %d finished a mismatched call without error", r)
					}
				}
			})
		}
	}
}

// TestCallNames: the calls this package tags its messages with name
// themselves in the transports' errors as the command line spells them.
func TestCallNames(t *testing.T) {
	ar := signature(&Args{Op: AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Count: 64})
	bcast := signature(&Args{Op: Broadcast, DType: dtype.FP32, Count: 64, Root: 2})
	empty := ar
	empty.NoPayload = true
	barrier := backends.Call{Op: barrierCode, Root: -1, Names: callNames{}}
	tests := []struct {
		name, got, want string
	}{
		{"allreduce", ar.String(), "allreduce(fp32, 64, sum)"},
		{"rooted", bcast.String(), "broadcast(fp32, 64, root 2)"},
		{"no payload", empty.String(), "allreduce(fp32, 64, sum, no payload)"},
		{"barrier", barrier.String(), "barrier"},
		{"peer's op", ar.NameOp(uint8(AllGather), uint8(dtype.FP32)), "allgather(fp32)"},
		{"peer's barrier", ar.NameOp(barrierCode, 0), "barrier"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
