package results

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// CompareConfidence is the confidence level of the intervals around the
// medians that Compare reports, as benchstat's.
const CompareConfidence = 0.95

// CompareOptions configures Compare and the regression gate of
// `hccl-test compare`. The zero value is usable: alpha 0.05, no gate.
type CompareOptions struct {
	// Alpha is the significance level of the Mann-Whitney U test: a
	// difference with p <= Alpha is significant. Compare takes 0 as
	// 0.05; Validate, which checks what a user gave, refuses it (no test
	// reaches a level of 0).
	Alpha float64
	// Threshold is the smallest relative change of a row's median, as a
	// fraction (0.05 for 5%), that counts as a regression when it is
	// significant and for the worse (see Regressions). 0 turns the gate
	// off: the caller reports differences and fails on none.
	Threshold float64
}

// Validate says what is wrong with o, if anything.
func (o CompareOptions) Validate() error {
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return fmt.Errorf("alpha %v: want a level above 0 and below 1, such as 0.05", o.Alpha)
	}
	if !(o.Threshold >= 0) || math.IsInf(o.Threshold, 0) {
		return fmt.Errorf("threshold %v: want a fraction of at least 0, such as 0.05 for 5%%", o.Threshold)
	}
	return nil
}

// Comparison is one row in one unit, measured in both files.
type Comparison struct {
	Name, Unit string
	Old, New   benchmath.Summary // median and its CompareConfidence interval
	OldN, NewN int               // measurements on each side
	Delta      float64           // (new-old)/old of the medians; ±Inf if old is 0
	P          float64           // p-value of the Mann-Whitney U test
	// Significant reports P <= alpha: the medians differ beyond noise.
	Significant bool
	// Worse reports that the new median is worse than the old: higher for
	// sec/op, lower for GB/s units and for units a file says are better
	// higher. It is false when the better direction is unknown.
	Worse bool
	// Warnings say why the statistics are weak (too few measurements).
	Warnings []error
	// Means reports that a file is another tool's log (Samples.Source),
	// whose rows are one mean each: WriteComparison then shows a change
	// that is not significant too, marked as undecided.
	Means bool
}

// Compare compares the rows of old and new that share a name and unit, with
// benchstat's statistics (benchmath.AssumeNothing: medians, their confidence
// intervals and the Mann-Whitney U test). The result is sorted by unit,
// sec/op first, then busbw-GB/s, algbw-GB/s and any other, and within a unit
// in the order the rows first appear in old. A row with too few measurements
// is compared and carries warnings. Rows in one file only are left out; see
// Unpaired.
func Compare(old, new *Samples, opt CompareOptions) []Comparison {
	thr := benchmath.DefaultThresholds
	if opt.Alpha > 0 {
		thr.CompareAlpha = opt.Alpha
	}
	assume := benchmath.AssumeNothing
	var cs []Comparison
	for _, k := range old.keys {
		if _, ok := new.values[k]; !ok {
			continue
		}
		// NewSample sorts the values in place.
		s1 := benchmath.NewSample(slices.Clone(old.values[k]), &thr)
		s2 := benchmath.NewSample(slices.Clone(new.values[k]), &thr)
		test := assume.Compare(s1, s2)
		c := Comparison{Name: k.name, Unit: k.unit, OldN: len(s1.Values), NewN: len(s2.Values),
			Old: assume.Summary(s1, CompareConfidence), New: assume.Summary(s2, CompareConfidence),
			P: test.P, Significant: test.P <= test.Alpha, // as benchmath's FormatDelta
			Means: old.Source != "" || new.Source != ""}
		if c.Old.Center != c.New.Center {
			c.Delta = (c.New.Center - c.Old.Center) / c.Old.Center
		}
		c.Worse = float64(better(k.unit, old, new))*c.Delta < 0
		for _, w := range slices.Concat(c.Old.Warnings, c.New.Warnings, test.Warnings) {
			if !slices.ContainsFunc(c.Warnings, func(e error) bool { return e.Error() == w.Error() }) {
				c.Warnings = append(c.Warnings, w)
			}
		}
		cs = append(cs, c)
	}
	// Time first, then bus bandwidth, which compares across rank counts.
	rank := func(unit string) int {
		return cmp.Or(slices.Index([]string{"sec/op", unitBusBW, unitAlgBW}, unit)+1, 4)
	}
	slices.SortStableFunc(cs, func(a, b Comparison) int {
		return cmp.Or(cmp.Compare(rank(a.Unit), rank(b.Unit)), strings.Compare(a.Unit, b.Unit))
	})
	return cs
}

// better returns +1 if higher values of unit are better, -1 if lower, 0 if
// unknown: from the files' "Unit ... better=" lines, benchfmt's defaults,
// and for CSV, which has no such lines, GB/s units.
func better(unit string, files ...*Samples) int {
	for _, f := range files {
		if b := f.units.GetBetter(unit); b != 0 {
			return b
		}
	}
	if strings.HasSuffix(unit, "GB/s") {
		return 1
	}
	return 0
}

// Regressions returns the comparisons of cs that are significant, for the
// worse, and changed by more than threshold (a fraction: 0.05 for 5%).
func Regressions(cs []Comparison, threshold float64) []Comparison {
	var r []Comparison
	for _, c := range cs {
		if c.Significant && c.Worse && math.Abs(c.Delta) > threshold {
			r = append(r, c)
		}
	}
	return r
}

// Detectable reports whether a row measured n1 times in one file and n2 in
// the other could show a significant difference at alpha (0 for 0.05)
// however far apart its measurements: the Mann-Whitney U test of two
// samples that do not overlap at all has its smallest p-value, which at
// alpha 0.05 needs 4 measurements a side to reach. A regression gate over
// rows that are none of them Detectable passes whatever the files hold.
func Detectable(n1, n2 int, alpha float64) bool {
	if n1 < 1 || n2 < 1 {
		return false
	}
	thr := benchmath.DefaultThresholds
	if alpha > 0 {
		thr.CompareAlpha = alpha
	}
	low, high := make([]float64, n1), make([]float64, n2)
	for i := range low {
		low[i] = float64(i)
	}
	for i := range high {
		high[i] = float64(n1 + i)
	}
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(low, &thr), benchmath.NewSample(high, &thr))
	return c.P <= c.Alpha
}

// Unpaired returns the names of the rows measured in only one of the files,
// in the order they appear in it.
func Unpaired(old, new *Samples) (onlyOld, onlyNew []string) {
	only := func(a, b *Samples) (names []string) {
		for _, k := range a.keys {
			if !slices.Contains(names, k.name) && !slices.ContainsFunc(b.keys, func(o sampleKey) bool { return o.name == k.name }) {
				names = append(names, k.name)
			}
		}
		return names
	}
	return only(old, new), only(new, old)
}

// WriteNotes writes to w a line per warning of each file (a line that did
// not parse), a note for each file that is another tool's log (what its
// one mean per row can and cannot decide), and a short line listing the
// rows of each file that the other lacks, which Compare leaves out.
func WriteNotes(w io.Writer, old, new *Samples, oldLabel, newLabel string) error {
	var b strings.Builder
	for _, e := range slices.Concat(old.Warnings, new.Warnings) {
		fmt.Fprintf(&b, "warning: %v\n", e)
	}
	for i, f := range []*Samples{old, new} {
		if f.Source != "" {
			fmt.Fprintf(&b, "note: %s is a log of %s: one mean per row and placement (one more for each time the log measured a row again), "+
				"not each iteration's time; a change marked ? is of those means, and no test can call it significant "+
				"with fewer than %d measurements a side: concatenate the logs of several runs into each file to decide it\n",
				[]string{oldLabel, newLabel}[i], f.Source, RunsToDecide(0))
		}
	}
	onlyOld, onlyNew := Unpaired(old, new)
	for i, names := range [][]string{onlyOld, onlyNew} {
		if n := len(names); n > 0 {
			fmt.Fprintf(&b, "only in %s, not compared: %d row%s: %s", []string{oldLabel, newLabel}[i], n,
				map[bool]string{true: "s"}[n > 1], strings.Join(names[:min(n, 3)], ", "))
			if n > 3 {
				fmt.Fprintf(&b, " and %d more", n-3)
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteComparison writes cs to w as benchstat would: a table per unit, with
// a line per row giving the old and new medians ± their confidence intervals
// (in percent), the change ("~" when not significant), the p-value and the
// measurements per side; "worse" marks a significant change for the worse.
// Each table ends with its distinct warnings. Labels head the columns.
func WriteComparison(w io.Writer, cs []Comparison, oldLabel, newLabel string) error {
	var b strings.Builder
	if len(cs) == 0 {
		b.WriteString("no rows in both files\n")
	}
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].Unit == cs[i].Unit {
			j++
		}
		if i > 0 {
			b.WriteString("\n")
		}
		writeTable(&b, cs[i:j], oldLabel, newLabel)
		i = j
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable writes the comparisons of one unit.
func writeTable(b *strings.Builder, cs []Comparison, oldLabel, newLabel string) {
	nameWidth := len(cs[0].Unit)
	for _, c := range cs {
		nameWidth = max(nameWidth, len(c.Name))
	}
	// Numbers are right-aligned: every cell ends in a tab and starts with
	// its own spacing, and names are padded to one width so that they read
	// left-aligned.
	tw := tabwriter.NewWriter(b, 0, 0, 0, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t  %s\t  %s\t  vs base\t\n", nameWidth, cs[0].Unit, oldLabel, newLabel)
	var warnings []string // distinct, in order, with how many rows have each
	count := map[string]int{}
	for _, c := range cs {
		sc := benchunit.CommonScale([]float64{c.Old.Center, c.New.Center}, benchunit.ClassOf(c.Unit))
		delta := "~"
		switch {
		case c.Significant:
			delta = fmt.Sprintf("%+.2f%%", 100*c.Delta)
			if math.IsInf(c.Delta, 0) {
				delta = "?"
			}
		case c.Means && c.Delta != 0 && !math.IsInf(c.Delta, 0):
			// One mean a side: the change is shown, and marked as
			// what the test could not decide (WriteNotes says so).
			delta = fmt.Sprintf("%+.2f%%?", 100*c.Delta)
		}
		test := "(" + benchmath.Comparison{P: c.P, N1: c.OldN, N2: c.NewN}.String() + ")"
		if c.Significant && c.Worse {
			test += " worse"
		}
		fmt.Fprintf(tw, "%-*s\t  %s ± %s\t  %s ± %s\t  %s\t %s\n", nameWidth, c.Name,
			sc.Format(c.Old.Center), c.Old.PctRangeString(),
			sc.Format(c.New.Center), c.New.PctRangeString(), delta, test)
		for _, w := range c.Warnings {
			if count[w.Error()]++; count[w.Error()] == 1 {
				warnings = append(warnings, w.Error())
			}
		}
	}
	tw.Flush()
	for _, w := range warnings {
		fmt.Fprintf(b, "warning: %s (%d of %d rows)\n", w, count[w], len(cs))
	}
}
