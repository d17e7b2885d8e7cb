package dtype_test

import (
	"fmt"

	"github.com/hccl-test/hccl-test/dtype"
)

// Reduce two fp16 buffers in place and finish an average over two ranks.
func ExampleReducer() {
	a, b := make([]byte, 3*2), make([]byte, 3*2)
	for i, v := range []float64{1, 2.5, 65504} {
		dtype.Encode(dtype.FP16, a, i, v)
		dtype.Encode(dtype.FP16, b, i, 1)
	}
	sum := dtype.Reducer(dtype.FP16, dtype.Avg) // the Sum kernel
	sum(a, a, b)                                // a += b
	dtype.DivideBy(dtype.FP16, a, 2)
	for i := range 3 {
		fmt.Println(dtype.Decode(dtype.FP16, a, i))
	}
	// Output:
	// 1
	// 1.75
	// 32752
}

// Check a reduction result against the pattern's expected values.
func ExamplePattern() {
	p := dtype.Pattern{DType: dtype.Int8, Op: dtype.Sum, Ranks: 4}
	const first, n = 1000, 2000 // this chunk holds elements 1000..2999
	bufs := make([][]byte, p.Ranks)
	for r := range bufs {
		bufs[r] = make([]byte, n)
		p.Fill(bufs[r], r, first)
	}
	sum := dtype.Reducer(p.DType, p.Op)
	for _, b := range bufs[1:] {
		sum(bufs[0], bufs[0], b)
	}
	want := p.Template(-1)
	fmt.Println("wrong:", dtype.CountWrong(p.DType, bufs[0], want, first))
	bufs[0][7]++
	fmt.Println("wrong after one change:", dtype.CountWrong(p.DType, bufs[0], want, first))
	// Output:
	// wrong: 0
	// wrong after one change: 1
}
