package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hccl-test/hccl-test/results"
)

// gate applies compare's gates to cs, the rows of cur (the new file; old
// is the first), and
// says on stderr, a line per gate, what failed: the regressions past
// --threshold and the bus bandwidths below --min-busbw (exitRegressed),
// else the rows whose medians moved past --threshold with too few
// measurements to decide (exitUndecided), naming the runs that would.
//
// many says that the comparisons are not of two files alone: each names
// its column and the baseline it was compared with.
func gate(stderr io.Writer, cs []results.Comparison, old, cur *results.Samples, opt results.CompareOptions,
	threshold, minBusBW string, minBW float64, many bool) int {
	where := func(c results.Comparison) string {
		if !many {
			return ""
		}
		return fmt.Sprintf(", %s against %s", c.Col, c.Base)
	}
	code := exitOK
	if threshold != "" { // --threshold 0: any significant change for the worse
		if bad := results.Regressions(cs, opt.Threshold); len(bad) > 0 {
			fmt.Fprintf(stderr, "%s compare: %s got worse by more than %s: first %s (%s %+.1f%%%s)\n",
				programName, rowCount(bad), threshold, bad[0].Name, bad[0].Unit, 100*bad[0].Delta, where(bad[0]))
			code = exitRegressed
		}
	}
	if minBW > 0 {
		if below, rows := results.BusBWBelow(cur, minBW); len(below) > 0 {
			fmt.Fprintf(stderr, "%s compare: %d of %d rows of %s have a bus bandwidth below --min-busbw %s: first %s (%.4g GB/s, median of %d)\n",
				programName, len(below), rows, cur.Path, minBusBW, below[0].Name, below[0].Median, below[0].N)
			code = exitRegressed
		}
	}
	if threshold != "" {
		if und := results.Undecided(cs, opt.Threshold, opt.Alpha); len(und) > 0 {
			alpha := cmp.Or(opt.Alpha, 0.05)
			need := "no number of runs"
			if n := results.RunsToDecide(opt.Alpha); n > 0 {
				need = runsHint(n, old, cur) // comparehint.go
			}
			fmt.Fprintf(stderr, "%s compare: %s got worse by more than %s with too few measurements to decide: "+
				"first %s (%s %+.1f%%, %d and %d measurements%s); the U test can reach --alpha %v with %s\n",
				programName, rowCount(und), threshold, und[0].Name, und[0].Unit, 100*und[0].Delta, und[0].OldN, und[0].NewN, where(und[0]), alpha, need)
			if code == exitOK {
				code = exitUndecided
			}
		}
	}
	return code
}

// rowCount says how many rows cs compares, each counted once whatever its
// units: "1 row", "3 rows".
func rowCount(cs []results.Comparison) string {
	names := map[string]bool{}
	for _, c := range cs {
		names[c.Name] = true
	}
	if len(names) == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", len(names))
}

// parseGBps reads a bandwidth in GB/s, "12.5" or "12.5GB/s": a positive
// finite number, in no other unit.
func parseGBps(s string) (float64, error) {
	num := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "GB/s"))
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return 0, errors.New("want a bus bandwidth in GB/s above 0, such as 12.5 or 12.5GB/s")
	}
	return f, nil
}

// parseFraction reads 5% or 0.05 as 0.05. A bare number of 1 or more is
// refused: "5" is more likely to mean 5% than 500%, and a gate at 500%
// would pass nearly everything.
func parseFraction(s string) (float64, error) {
	v, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 0) || math.IsInf(f, 0) {
		return 0, errors.New("want a percentage such as 5% or a fraction such as 0.05")
	}
	if !pct && f >= 1 {
		return 0, fmt.Errorf("a fraction of %v is %v%%: write %v%% for %v percent, or %v%% if you mean it", f, 100*f, f, f, 100*f)
	}
	if pct {
		f /= 100
	}
	return f, nil
}
