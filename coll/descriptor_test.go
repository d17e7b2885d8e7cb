package coll

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestDescriptorFacts checks each collective's fixed facts and its bus
// factor and blocks on 1, 2, 3 and 8 ranks against values written out.
func TestDescriptorFacts(t *testing.T) {
	for _, tc := range []struct {
		op      Op
		name    string
		reduces bool
		rooted  bool
		layout  Layout
		bus     [4]float64 // n = 1, 2, 3, 8
		blocks  [4]int     // n = 1, 2, 3, 8
	}{
		{AllReduce, "allreduce", true, false, SameStart, [4]float64{0, 1, 4.0 / 3, 1.75}, [4]int{1, 1, 1, 1}},
		{AllGather, "allgather", false, false, SendInRecv, [4]float64{0, 0.5, 2.0 / 3, 0.875}, [4]int{1, 2, 3, 8}},
		{ReduceScatter, "reducescatter", true, false, RecvInSend, [4]float64{0, 0.5, 2.0 / 3, 0.875}, [4]int{1, 2, 3, 8}},
		{Broadcast, "broadcast", false, true, SameStart, [4]float64{1, 1, 1, 1}, [4]int{1, 1, 1, 1}},
		{Reduce, "reduce", true, true, SameStart, [4]float64{1, 1, 1, 1}, [4]int{1, 1, 1, 1}},
		{AllToAll, "alltoall", false, false, SameStart, [4]float64{0, 0.5, 2.0 / 3, 0.875}, [4]int{1, 2, 3, 8}},
		{SendRecv, "sendrecv", false, false, SameStart, [4]float64{1, 1, 1, 1}, [4]int{1, 1, 1, 1}},
		{Gather, "gather", false, true, SendInRecv, [4]float64{0, 0.5, 2.0 / 3, 0.875}, [4]int{1, 2, 3, 8}},
		{Scatter, "scatter", false, true, RecvInSend, [4]float64{0, 0.5, 2.0 / 3, 0.875}, [4]int{1, 2, 3, 8}},
		{AllToAllV, "alltoallv", false, false, NoInPlace, [4]float64{0, 0.5, 2.0 / 3, 0.875}, [4]int{1, 2, 3, 8}},
		{AllGatherV, "allgatherv", false, false, SendInRecv, [4]float64{0, 0.5, 2.0 / 3, 0.875}, [4]int{1, 2, 3, 8}},
		{ReduceScatterV, "reducescatterv", true, false, RecvInSend, [4]float64{0, 0.5, 2.0 / 3, 0.875}, [4]int{1, 2, 3, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.op.Desc()
			if d == nil {
				t.Fatalf("%v has no descriptor", tc.op)
			}
			if d.Name != tc.name || tc.op.String() != tc.name {
				t.Errorf("name %q, String %q, want %q", d.Name, tc.op, tc.name)
			}
			if got, err := ParseOp(tc.name); err != nil || got != tc.op {
				t.Errorf("ParseOp(%q) = %v, %v", tc.name, got, err)
			}
			if d.Reduces != tc.reduces || tc.op.Reduces() != tc.reduces {
				t.Errorf("reduces %v, Reduces() %v, want %v", d.Reduces, tc.op.Reduces(), tc.reduces)
			}
			if d.Rooted != tc.rooted || tc.op.Rooted() != tc.rooted {
				t.Errorf("rooted %v, Rooted() %v, want %v", d.Rooted, tc.op.Rooted(), tc.rooted)
			}
			if d.InPlace != tc.layout {
				t.Errorf("in-place layout %v, want %v", d.InPlace, tc.layout)
			}
			for i, n := range []int{1, 2, 3, 8} {
				if got := tc.op.BusFactor(n); math.Abs(got-tc.bus[i]) > 1e-12 {
					t.Errorf("BusFactor(%d) = %v, want %v", n, got, tc.bus[i])
				}
				if got := tc.op.Blocks(n); got != tc.blocks[i] {
					t.Errorf("Blocks(%d) = %d, want %d", n, got, tc.blocks[i])
				}
			}
		})
	}
	if got := len(AllOps()); got != 12 {
		t.Errorf("%d collectives, want 12", got)
	}
}

// TestDescriptorRanks checks each collective's send and receive lengths
// and expected output, rank by rank, on 1, 2, 3 and 8 ranks with the root
// away from rank 0 where there is room, against values written out. The
// lengths are in blocks, one per rank; the expectation is one group per
// rank, separated by "|", of one "template.offset" per output block, R
// for the reduced template, or "-" for no output to check.
func TestDescriptorRanks(t *testing.T) {
	const (
		ones8  = "1 1 1 1 1 1 1 1"
		eights = "8 8 8 8 8 8 8 8"
		all8   = "0.0 1.0 2.0 3.0 4.0 5.0 6.0 7.0"
	)
	for _, tc := range []struct {
		op         Op
		n, root    int
		send, recv string
		expect     string
	}{
		{AllReduce, 1, 0, "1", "1", "R.0"},
		{AllReduce, 2, 1, "1 1", "1 1", "R.0 | R.0"},
		{AllReduce, 3, 2, "1 1 1", "1 1 1", "R.0 | R.0 | R.0"},
		{AllReduce, 8, 5, ones8, ones8, "R.0 | R.0 | R.0 | R.0 | R.0 | R.0 | R.0 | R.0"},

		{AllGather, 1, 0, "1", "1", "0.0"},
		{AllGather, 2, 1, "1 1", "2 2", "0.0 1.0 | 0.0 1.0"},
		{AllGather, 3, 2, "1 1 1", "3 3 3", "0.0 1.0 2.0 | 0.0 1.0 2.0 | 0.0 1.0 2.0"},
		{AllGather, 8, 5, ones8, eights, strings.Repeat(all8+" | ", 7) + all8},

		{ReduceScatter, 1, 0, "1", "1", "R.0"},
		{ReduceScatter, 2, 1, "2 2", "1 1", "R.0 | R.1"},
		{ReduceScatter, 3, 2, "3 3 3", "1 1 1", "R.0 | R.1 | R.2"},
		{ReduceScatter, 8, 5, eights, ones8, "R.0 | R.1 | R.2 | R.3 | R.4 | R.5 | R.6 | R.7"},

		{Broadcast, 1, 0, "1", "1", "0.0"},
		{Broadcast, 2, 1, "0 1", "1 1", "1.0 | 1.0"},
		{Broadcast, 3, 2, "0 0 1", "1 1 1", "2.0 | 2.0 | 2.0"},
		{Broadcast, 8, 5, "0 0 0 0 0 1 0 0", ones8, "5.0 | 5.0 | 5.0 | 5.0 | 5.0 | 5.0 | 5.0 | 5.0"},

		{Reduce, 1, 0, "1", "1", "R.0"},
		{Reduce, 2, 1, "1 1", "0 1", "- | R.0"},
		{Reduce, 3, 2, "1 1 1", "0 0 1", "- | - | R.0"},
		{Reduce, 8, 5, ones8, "0 0 0 0 0 1 0 0", "- | - | - | - | - | R.0 | - | -"},

		{AllToAll, 1, 0, "1", "1", "0.0"},
		{AllToAll, 2, 1, "2 2", "2 2", "0.0 1.0 | 0.1 1.1"},
		{AllToAll, 3, 2, "3 3 3", "3 3 3", "0.0 1.0 2.0 | 0.1 1.1 2.1 | 0.2 1.2 2.2"},
		{AllToAll, 8, 5, eights, eights, "" +
			"0.0 1.0 2.0 3.0 4.0 5.0 6.0 7.0 | " +
			"0.1 1.1 2.1 3.1 4.1 5.1 6.1 7.1 | " +
			"0.2 1.2 2.2 3.2 4.2 5.2 6.2 7.2 | " +
			"0.3 1.3 2.3 3.3 4.3 5.3 6.3 7.3 | " +
			"0.4 1.4 2.4 3.4 4.4 5.4 6.4 7.4 | " +
			"0.5 1.5 2.5 3.5 4.5 5.5 6.5 7.5 | " +
			"0.6 1.6 2.6 3.6 4.6 5.6 6.6 7.6 | " +
			"0.7 1.7 2.7 3.7 4.7 5.7 6.7 7.7"},

		{SendRecv, 1, 0, "1", "1", "0.0"},
		{SendRecv, 2, 1, "1 1", "1 1", "1.0 | 0.0"},
		{SendRecv, 3, 2, "1 1 1", "1 1 1", "2.0 | 0.0 | 1.0"},
		{SendRecv, 8, 5, ones8, ones8, "7.0 | 0.0 | 1.0 | 2.0 | 3.0 | 4.0 | 5.0 | 6.0"},

		{Gather, 1, 0, "1", "1", "0.0"},
		{Gather, 2, 1, "1 1", "0 2", "- | 0.0 1.0"},
		{Gather, 3, 2, "1 1 1", "0 0 3", "- | - | 0.0 1.0 2.0"},
		{Gather, 8, 5, ones8, "0 0 0 0 0 8 0 0", "- | - | - | - | - | " + all8 + " | - | -"},

		{Scatter, 1, 0, "1", "1", "0.0"},
		{Scatter, 2, 1, "0 2", "1 1", "1.0 | 1.1"},
		{Scatter, 3, 2, "0 0 3", "1 1 1", "2.0 | 2.1 | 2.2"},
		{Scatter, 8, 5, "0 0 0 0 0 8 0 0", ones8, "5.0 | 5.1 | 5.2 | 5.3 | 5.4 | 5.5 | 5.6 | 5.7"},
	} {
		t.Run(fmt.Sprintf("%v/n=%d", tc.op, tc.n), func(t *testing.T) {
			d := tc.op.Desc()
			wantSend, wantRecv := fields(t, tc.send), fields(t, tc.recv)
			wantExpect := parseExpect(t, tc.expect)
			if len(wantSend) != tc.n || len(wantRecv) != tc.n || len(wantExpect) != tc.n {
				t.Fatalf("table row has %d, %d, %d ranks, want %d", len(wantSend), len(wantRecv), len(wantExpect), tc.n)
			}
			for rank := range tc.n {
				s, r := d.Lengths(rank, tc.root, tc.n)
				if s != wantSend[rank] || r != wantRecv[rank] {
					t.Errorf("rank %d: lengths (%d, %d) blocks, want (%d, %d)", rank, s, r, wantSend[rank], wantRecv[rank])
				}
				got := d.Expect(rank, tc.root, tc.n)
				if !reflect.DeepEqual(got, wantExpect[rank]) {
					t.Errorf("rank %d: expect %v, want %v", rank, got, wantExpect[rank])
				}
			}
		})
	}
}

// TestBufferBytes checks the byte lengths of a row's buffers, the root's,
// including a size that does not split into whole blocks (a fused row's
// bucket), whose full buffer keeps the size.
func TestBufferBytes(t *testing.T) {
	for _, tc := range []struct {
		op         Op
		n          int
		size       int64
		send, recv int64
	}{
		{AllReduce, 3, 48, 48, 48},
		{AllGather, 3, 48, 16, 48},
		{AllGather, 3, 50, 16, 50},
		{ReduceScatter, 3, 50, 50, 16},
		{Broadcast, 8, 64, 64, 64},
		{Reduce, 2, 10, 10, 10},
		{AllToAll, 8, 64, 64, 64},
		{SendRecv, 2, 10, 10, 10},
		{Gather, 8, 64, 8, 64},
		{Scatter, 8, 64, 64, 8},
		{Scatter, 1, 7, 7, 7},
	} {
		s, r := tc.op.BufferBytes(tc.n, tc.size)
		if s != tc.send || r != tc.recv {
			t.Errorf("%v on %d ranks, %d bytes: (%d, %d), want (%d, %d)", tc.op, tc.n, tc.size, s, r, tc.send, tc.recv)
		}
	}
}

// TestInvalidOp checks what an invalid Op answers: no descriptor, and the
// defaults that callers rely on.
func TestInvalidOp(t *testing.T) {
	for _, o := range []Op{0, ReduceScatterV + 1} {
		if o.Valid() || o.Desc() != nil || o.Reduces() || o.Rooted() || o.BusFactor(4) != 1 || o.Blocks(4) != 1 {
			t.Errorf("%v: valid %v, desc %v, reduces %v, rooted %v, bus %v, blocks %d",
				o, o.Valid(), o.Desc(), o.Reduces(), o.Rooted(), o.BusFactor(4), o.Blocks(4))
		}
	}
	if _, err := ParseOp("allsum"); err == nil || !strings.Contains(err.Error(), "allreduce allgather reducescatter") {
		t.Errorf("ParseOp(allsum) error %v", err)
	}
}

// fields parses space-separated integers.
func fields(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Fields(s) {
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("table: %v", err)
		}
		out = append(out, v)
	}
	return out
}

// parseExpect parses the expectation notation of TestDescriptorRanks.
func parseExpect(t *testing.T, s string) [][]Expected {
	t.Helper()
	var out [][]Expected
	for _, group := range strings.Split(s, "|") {
		var blocks []Expected
		for _, f := range strings.Fields(group) {
			if f == "-" {
				continue
			}
			tmpl, off, ok := strings.Cut(f, ".")
			e := Expected{Template: Reduced}
			if tmpl != "R" {
				e.Template = fields(t, tmpl)[0]
			}
			if !ok {
				t.Fatalf("table: %q has no offset", f)
			}
			e.Offset = fields(t, off)[0]
			blocks = append(blocks, e)
		}
		out = append(out, blocks)
	}
	return out
}
