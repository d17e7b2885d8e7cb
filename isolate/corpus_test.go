package isolate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pairLog describes one made-up nccl-tests sendrecv log of a pair.
type pairLog struct {
	a, b   string
	gbps   float64 // the link's bandwidth, reached at large sizes
	file   string  // file name; a-b.log when ""
	cutAt  int     // > 0: the log fails in the middle of row cutAt (from 1)
	wrong  int     // > 0: the last row has this many wrong elements
	noRank bool    // no rank lines: the hosts come from the file name
	op     string  // nccl-tests program; sendrecv_perf when ""
	gpus   int     // ranks on each host (nccl-tests' -g); 1 when 0
}

// sizes of the made-up logs: 1, 4, 16, 64 MiB.
var sizes = []int64{1 << 20, 4 << 20, 16 << 20, 64 << 20}

// text is the log as nccl-tests 2.19 writes it: busbw at size s is
// gbps x s/(s+256 KiB), a latency-bound start and a plateau.
func (p pairLog) text() string {
	op := p.op
	if op == "" {
		op = "sendrecv_perf"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# nccl-tests version 2.19.6 nccl-headers=22905 nccl-library=22905\n# Collective test starting: %s\n", op)
	gpus := max(1, p.gpus)
	fmt.Fprintf(&b, "# nThread 1 nGpus %d minBytes 1048576 maxBytes 67108864 step: 4(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n", gpus)
	if !p.noRank {
		for i, h := range []string{p.a, p.b} {
			for g := range gpus {
				r := i*gpus + g
				fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:18:00] Example Accelerator X1\n", r, 4000+r, h, g)
			}
		}
	}
	b.WriteString("#\n#                                                              out-of-place                       in-place          \n")
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n")
	b.WriteString("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n")
	for i, s := range sizes {
		bw := p.gbps * float64(s) / float64(s+256<<10)
		us := float64(s) / (bw * 1e3)
		wrong := 0
		if i == len(sizes)-1 {
			wrong = p.wrong
		}
		row := fmt.Sprintf("%12d  %12d     float     sum      -1  %7.2f  %6.2f  %6.2f  %6d  %7.2f  %6.2f  %6.2f  %6d\n",
			s, s/4, us, bw, bw, wrong, us, bw, bw, 0)
		if i+1 == p.cutAt {
			fmt.Fprintf(&b, "%s%s: Test NCCL failure common.cu:1190 'unhandled system error'\n .. %s pid 4000: Test failure common.cu:1050\n", row[:60], p.a, p.a)
			return b.String()
		}
		b.WriteString(row)
	}
	fmt.Fprintf(&b, "# Out of bounds values : %d %s\n# Avg bus bandwidth    : %.4f \n#\n# Collective test concluded: %s\n", p.wrong, map[bool]string{true: "FAILED", false: "OK"}[p.wrong > 0], p.gbps/2, op)
	return b.String()
}

// writeCorpus writes the logs into a new directory and returns it.
func writeCorpus(t *testing.T, logs []pairLog) string {
	t.Helper()
	dir := t.TempDir()
	for _, l := range logs {
		name := l.file
		if name == "" {
			name = l.a + "-" + l.b + ".log"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(l.text()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cluster returns a log for every pair of n hosts node01...: gbps(a, b)
// gives each pair's bandwidth.
func cluster(n int, gbps func(i, j int) float64) []pairLog {
	var logs []pairLog
	for i := 1; i <= n; i++ {
		for j := i + 1; j <= n; j++ {
			logs = append(logs, pairLog{a: host(i), b: host(j), gbps: gbps(i, j)})
		}
	}
	return logs
}

func host(i int) string { return fmt.Sprintf("node%02d", i) }

// healthy is 20 GB/s give or take 2%, by pair.
func healthy(i, j int) float64 { return 20 * (1 + 0.01*float64((i*7+j*3)%5-2)) }
