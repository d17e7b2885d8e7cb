package group_test

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/group"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestGroupsAtOnce runs an allreduce in two groups of three at once, over
// one world of six, plus a world barrier on the same links: each group
// sums its own members' values only.
func TestGroupsAtOnce(t *testing.T) {
	groups := [][]int{{0, 2, 4}, {1, 3, 5}}
	w := shm.NewWorld(6)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	sums := make([]int32, 6)
	for r := range 6 {
		wg.Go(func() {
			world := w.Endpoint(r)
			members := groups[r%2]
			gt, err := group.New(world, members)
			if err != nil {
				errs[r] = err
				return
			}
			if gt.Rank() != r/2 || gt.Size() != 3 {
				t.Errorf("world rank %d is group rank %d of %d", r, gt.Rank(), gt.Size())
			}
			gc, wc := coll.NewComm(gt), coll.NewComm(world)
			for range 3 {
				send, recv := make([]byte, 4), make([]byte, 4)
				binary.LittleEndian.PutUint32(send, uint32(r+1))
				if _, err := gc.Run(ctx, "ring", &coll.Args{Op: coll.AllReduce, DType: dtype.Int32, RedOp: dtype.Sum,
					Count: 1, Send: send, Recv: recv}); err != nil {
					errs[r] = err
					return
				}
				sums[r] = int32(binary.LittleEndian.Uint32(recv))
				if err := wc.Barrier(ctx); err != nil {
					errs[r] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for r := range 6 {
		want := int32(0)
		for _, m := range groups[r%2] {
			want += int32(m + 1)
		}
		if errs[r] != nil || sums[r] != want {
			t.Errorf("rank %d: sum %d, %v; want %d", r, sums[r], errs[r], want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	w := shm.NewWorld(4)
	for _, members := range [][]int{{1, 2}, {0, 7}} {
		if _, err := group.New(w.Endpoint(0), members); err == nil {
			t.Errorf("group %v accepted for world rank 0", members)
		}
	}
	gt, err := group.New(w.Endpoint(0), []int{0, 3})
	if err != nil {
		t.Fatal(err)
	}
	// A group rank out of range never reaches another member.
	if err := gt.Send(2, []byte{1}).Wait(context.Background()); err == nil {
		t.Error("send to group rank 2 of 2 succeeded")
	}
	var _ backends.Transport = gt
}
