package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/internal/limits"
)

// shownMean is the mean bus bandwidth of the rows a table shows (with
// --runs, the medians Median passes on, not every run's row): over the
// rows of at least BigRowBytes, and over all of them for when none is
// that large; in total and per algorithm asked for.
type shownMean struct {
	big, all          AlgoBusBW
	bigByAlgo, byAlgo []AlgoBusBW
}

// add accounts for one row shown.
func (m *shownMean) add(r Record) {
	if math.IsNaN(r.BusBW) {
		return
	}
	addTo := func(total *AlgoBusBW, by *[]AlgoBusBW) {
		addToMean(&total.BusBW, &total.Rows, r.BusBW)
		if r.AlgoRequested == "" {
			return
		}
		i := slices.IndexFunc(*by, func(a AlgoBusBW) bool { return a.Algo == r.AlgoRequested })
		if i < 0 {
			*by = append(*by, AlgoBusBW{Algo: r.AlgoRequested})
			i = len(*by) - 1
		}
		addToMean(&(*by)[i].BusBW, &(*by)[i].Rows, r.BusBW)
	}
	addTo(&m.all, &m.byAlgo)
	if r.Bytes >= BigRowBytes {
		addTo(&m.big, &m.bigByAlgo)
	}
}

// ncclAvgBusBW writes nccl-tests' footer line, "# Avg bus bandwidth    :
// X", in its format: the mean bus bandwidth over every record measured,
// of every size, placement and run (Summary.AllBusBW, the figure of -J's
// average_bus_bandwidth), with OK or FAILED after it under
// NCCL_TESTS_MIN_BW. Nothing when no row was measured and none was asked
// to pass.
func (t *Table) ncclAvgBusBW(s Summary) {
	if s.AllRows == 0 && t.h.MinBusBW <= 0 {
		return
	}
	line := fmt.Sprintf("# %-20s : %.6g %s", "Avg bus bandwidth", s.AllBusBW, MinBusBWVerdict(s.AllBusBW, t.h.MinBusBW))
	t.printf("%s\n", strings.TrimRight(line, " "))
}

// avgBusBW writes the footer's mean bus bandwidth: over the rows shown of
// at least 1 MiB (smaller rows measure latency and would drag the mean
// down), or, where none is that large, over all rows shown, saying so.
func (t *Table) avgBusBW() {
	m := &t.shown
	of := ""
	if t.h.Runs > 1 && !t.h.Cycles {
		of = ", each the median of its runs"
	}
	label := "rows >= 1 MiB"
	total, by, which := m.big, m.bigByAlgo, "the %s of at least 1 MiB"+of
	if total.Rows == 0 {
		label = "rows shown"
		total, by, which = m.all, m.byAlgo, "the %s shown"+of+"; none is of 1 MiB or more, so all count, though small rows measure latency more than bandwidth"
	}
	if total.Rows == 0 {
		t.printf("# avg bus bandwidth: no row measured\n")
		return
	}
	t.printf("# avg bus bandwidth (%s): %.4f GB/s (mean over "+which+")\n", label, total.BusBW, Count(total.Rows, "row"))
	for _, a := range by {
		t.printf("#   %s: %.4f GB/s over its %s\n", a.Algo, a.BusBW, Count(a.Rows, "row"))
	}
}

// Count returns n and noun, which takes an s unless n is 1: "1 row",
// "3 rows".
func Count[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// TimeoutString is how the header gives the limit of one op: "none (-T 0:
// ...)" for limits.MaxDuration, which --timeout 0 (nccl-tests'
// -T 0, no timeout) stands for, since every wait here keeps a bound.
func TimeoutString(d time.Duration) string {
	if d == limits.MaxDuration {
		return "none (-T 0: one op may take up to a week)"
	}
	return d.String()
}
