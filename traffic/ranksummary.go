package traffic

import (
	"bufio"
	"fmt"
	"io"
)

// WriteRankSummary writes, for matrix m of a row timed at sec seconds,
// the block nccl-tests 2.19 prints under NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY=1:
// a header line, then for every rank its bytes sent and received and its
// bandwidths, algbw = max(sent, received) / sec in GB/s and busbw =
// algbw x (n-1)/n. The header is nccl-tests' for a file (mode=matrix) and
// for the spread pattern (mode=generated, at the row's size); a routing's
// says its kind and spec. Every line starts with "#", as comments of the
// table do.
func (g *Generator) WriteRankSummary(w io.Writer, m *Matrix, size int64, sec float64) error {
	n := m.Ranks()
	bw := bufio.NewWriter(w)
	const tag = "# " + EnvPrintSummary + ":"
	switch g.spec.Kind {
	case File:
		fmt.Fprintf(bw, "%s mode=matrix nranks=%d matrix_dim=%d scale=%.3f time_usec=%.2f\n",
			tag, n, g.fileDim, g.spec.Scale, sec*1e6)
	case Spread:
		fmt.Fprintf(bw, "%s mode=generated nranks=%d total_bytes=%d spread=%.3f time_usec=%.2f\n",
			tag, n, g.spreadTotal(size), g.spec.Spread, sec*1e6)
	default:
		fmt.Fprintf(bw, "%s mode=%s nranks=%d spec=%s time_usec=%.2f\n", tag, g.spec.Kind, n, g.spec, sec*1e6)
	}
	factor := float64(n-1) / float64(n)
	for r := 0; r < n; r++ {
		sent, recv := m.Sent(r), m.Received(r)
		alg := float64(max(sent, recv)) / 1e9 / sec
		fmt.Fprintf(bw, "#   rank=%d send_bytes=%d recv_bytes=%d alg_bw=%.2f bus_bw=%.2f\n", r, sent, recv, alg, alg*factor)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("traffic: rank summary: %w", err)
	}
	return nil
}
