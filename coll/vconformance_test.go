package coll

import "github.com/hccl-test/hccl-test/dtype"

// testCounts are the counts of a variable-size call in the tests: uneven,
// odd, with empty pairs (c(s, d) is 0 when 7s+3d is a multiple of 5), all
// zero for count 0, and otherwise about count elements a pair; with hot
// set, rank hot-1 receives about 4 count from every rank.
func (c call) testCounts() *Counts {
	n := c.ranks
	cells := make([]int, n*n)
	for s := range n {
		for d := range n {
			cells[s*n+d] = c.count * ((7*s + 3*d) % 5) / 3
			if c.hot > 0 && d == c.hot-1 {
				cells[s*n+d] = 4*c.count + s*c.count%3 // the hot column
			}
		}
	}
	counts, err := NewCounts(n, cells)
	if err != nil {
		panic(err)
	}
	return counts
}

// vlayout returns rank's send and receive lengths in bytes for a
// variable-size c and, in place, where its block starts in the larger
// buffer: summed from testCounts here, not by the package.
func (c call) vlayout(rank int) (sendLen, recvLen, own int) {
	n, es, cnt := c.ranks, c.dt.Size(), c.testCounts()
	col := func(d int) (sum int) {
		for s := range n {
			sum += cnt.At(s, d)
		}
		return sum
	}
	switch c.op {
	case AllToAllV:
		for d := range n {
			sendLen += cnt.At(rank, d)
		}
		recvLen = col(rank)
	case AllGatherV, ReduceScatterV:
		for j := range n {
			if j < rank {
				own += col(j)
			}
			sendLen += col(j)
		}
		recvLen = sendLen
		if c.op == AllGatherV {
			sendLen = col(rank)
		} else {
			recvLen = col(rank)
		}
	}
	return sendLen * es, recvLen * es, own * es
}

// vbuffers is buffers for a variable-size collective.
func (c call) vbuffers(p dtype.Pattern, rank int) (send, recv []byte) {
	sendLen, recvLen, own := c.vlayout(rank)
	input := make([]byte, sendLen)
	p.Fill(input, rank, 0)
	if !c.inPlace {
		recv = make([]byte, recvLen)
		for i := range recv {
			recv[i] = 0xA5
		}
		return input, recv
	}
	if c.op == AllGatherV {
		recv = make([]byte, recvLen)
		copy(recv[own:], input)
		return recv[own : own+sendLen], recv
	}
	return input, input[own : own+recvLen]
}

// vlaid lays out a variable-size c's buffers in mem, as vbuffers does.
func (c call) vlaid(mem []byte, rank int) (send, recv []byte) {
	sendLen, recvLen, own := c.vlayout(rank)
	switch {
	case !c.inPlace:
		return mem[:sendLen], mem[sendLen : sendLen+recvLen]
	case c.op == AllGatherV:
		return mem[own : own+sendLen], mem[:recvLen]
	}
	return mem[:sendLen], mem[own : own+recvLen]
}

// vexpected is expected for a variable-size collective, from testCounts.
func (c call) vexpected(p dtype.Pattern, rank int) []byte {
	n, cnt := c.ranks, c.testCounts()
	col := func(d int) (sum int) {
		for s := range n {
			sum += cnt.At(s, d)
		}
		return sum
	}
	var vals []float64
	switch c.op {
	case AllToAllV:
		for s := range n {
			from := 0
			for d := range rank {
				from += cnt.At(s, d)
			}
			for i := range cnt.At(s, rank) {
				vals = append(vals, p.Value(s, from+i))
			}
		}
	case AllGatherV:
		for j := range n {
			for i := range col(j) {
				vals = append(vals, p.Value(j, i))
			}
		}
	case ReduceScatterV:
		own := 0
		for j := range rank {
			own += col(j)
		}
		for i := range col(rank) {
			vals = append(vals, p.Reduced(own+i))
		}
	}
	out := make([]byte, len(vals)*c.dt.Size())
	for i, v := range vals {
		dtype.Encode(c.dt, out, i, v)
	}
	return out
}
