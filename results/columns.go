package results

import "fmt"

// SkewReadable is the share of a row's time that its slowest rank must
// have spent busy (in the op, not waiting on a peer) for the row's skew to
// be read: below it, every rank spent the op in its waits (a receiver
// that moves the bytes inside its wait, as shm's does, counts the copy
// there), what is left is the harness's own few microseconds, and the
// ratio of such leftovers is noise. Record.Skew is 0 (shown as -) then.
const SkewReadable = 0.1

// tableColumn is one column of the table and the header line that explains it.
type tableColumn struct {
	name, note string
}

// timeColumn explains the time column: whose iterations it is the mean of
// (-a), and with -m that an iteration is several ops.
func timeColumn(h Header) string {
	ranks := map[string]string{
		"rank0": "rank 0",
		"mean":  "every rank (each iteration's mean over the ranks)",
		"min":   "the fastest rank (whose timed iterations took least in all)",
	}[h.Average]
	if ranks == "" {
		ranks = "the slowest rank (whose timed iterations took longest in all: the op is done when the last rank is done)"
	}
	s := "mean time of one op in us over the timed iterations of " + ranks
	if h.AggIters > 1 {
		s += fmt.Sprintf(", each iteration divided by the %d ops it issued", h.AggIters)
	}
	return s
}

// tableColumns returns the columns the table shows under h, in their order,
// each with its one-line explanation.
func tableColumns(h Header) []tableColumn {
	var cs []tableColumn
	if h.Cycles {
		cs = append(cs, tableColumn{"cycle", "which run of the repeated sweep (-N) measured the row, from 1: the CSV's and JSON's run"})
	}
	if h.Group != "" {
		cs = append(cs, tableColumn{"group", "the domain and its groups' size (tp/4); the row ran in every group of the domain at once"})
	}
	cs = append(cs,
		tableColumn{"size", "bytes per rank, as nccl-tests: allgather and gather the gathered total, reducescatter and scatter the scattered total, alltoall all a rank sends"},
		tableColumn{"count", "elements in size"},
		tableColumn{"type", "the data type"},
		tableColumn{"redop", "the reduction; none for collectives that do not reduce"},
		tableColumn{"root", "the root rank; -1 for collectives without one"},
		tableColumn{"algo", "the algorithm that ran; auto:NAME where auto chose NAME among the algorithms asked for"},
		tableColumn{"time", timeColumn(h)},
		tableColumn{"algbw", "size / time, in GB/s (1 GB = 1e9 bytes)"},
		tableColumn{"busbw", "algbw x the bus factor (allreduce 2(n-1)/n; allgather, reducescatter, alltoall, gather, scatter (n-1)/n; others 1), comparable with a link's bandwidth"},
		tableColumn{"util", "busbw / link bandwidth, in %; - when no link bandwidth is known; " + FasterMark + " after it: above 100%, the row moved data faster than its link (see below)"},
		tableColumn{"#wrong", "elements that differ from the expected result, checked outside the timed iterations; N/A when not checked"},
		tableColumn{"slow", "the rank with the most busy time (time in the op not spent waiting on a peer, over the timed iterations): the one the others waited for, a straggler only where skew is shown"},
		tableColumn{"skew", fmt.Sprintf("slow's busy time over the least busy rank's: a few when healthy, large with a slow rank or link; "+
			"- where slow was busy under %.0f%% of the time (the ranks spent it in waits, as on shm, whose receivers copy inside theirs: the ratio of the rest is noise)", 100*SkewReadable)},
	)
	if h.CPUTime {
		cs = append(cs, tableColumn{"cputime", "the process's CPU time (user+system) per op in us over the timed iterations, its share per rank it hosts, combined over the ranks as time is"})
	}
	if h.Retry != "" {
		cs = append(cs, tableColumn{"retry", "calls of the row (warm-up, timed, checked) that failed on a transport error and were run again"})
	}
	if h.Fusion {
		cs = append(cs,
			tableColumn{"buckets", "one iteration ran this many collectives of size/buckets back to back"},
			tableColumn{"fuse", "the row's time over the time of one collective of size (the 1-bucket row, which shows -): what fusing gains"})
	}
	if h.Overlap != "" {
		cs = append(cs,
			tableColumn{"compute", "the synthetic compute of an iteration, in us, timed alone"},
			tableColumn{"total", "mean time of an iteration overlapped with the compute, in us, slowest rank counting"},
			tableColumn{"eff", "(time + compute - total) / min(time, compute): 1 when the shorter one was hidden entirely, 0 when nothing was"})
	}
	if h.Stats {
		cs = append(cs,
			tableColumn{"min", "the fastest timed iteration, in us, of the iterations time is the mean of"},
			tableColumn{"p50", "the median iteration, in us"},
			tableColumn{"p99", "the 99th percentile iteration, in us"},
			tableColumn{"max", "the slowest iteration, in us"},
			tableColumn{"stddev", "the iterations' standard deviation, in us"},
			tableColumn{"model", "the cost model's prediction for the algorithm that ran, in us; - where none"})
	}
	if h.Timestamps {
		cs = append(cs, tableColumn{"timestamp", "when the row's measurement ended, local time (-S); the CSV's and JSON's timestamp"})
	}
	return cs
}

// explainColumns writes the header's block that explains every column the
// table shows, one line each.
func (t *Table) explainColumns() {
	t.printf("# columns:\n")
	if t.both {
		t.printf("#   out-of-place, in-place: each line shows a size twice, with separate buffers and with the output written over the input\n")
	}
	for _, c := range tableColumns(t.h) {
		t.printf("#   %s: %s\n", c.name, c.note)
	}
}
