package results

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"
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

// Comparison is one row in one unit, measured in two columns (by default,
// two files): the baseline (Old) and another (New).
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
	// Base and Col are the labels of the columns compared, the
	// baseline's and the other's (the files' paths by default); Table
	// is the table's key beside the unit, "" for none (see
	// CompareTable).
	Base, Col, Table string
}

// Compare compares the rows of old and new that share a name and unit, with
// benchstat's statistics (benchmath.AssumeNothing: medians, their confidence
// intervals and the Mann-Whitney U test). The result is sorted by unit,
// sec/op first, then busbw-GB/s, algbw-GB/s and any other, and within a unit
// in the order the rows first appear in old. A row with too few measurements
// is compared and carries warnings. Rows in one file only are left out; see
// Unpaired. It is CompareFiles of the two with DefaultGrouping.
func Compare(old, new *Samples, opt CompareOptions) []Comparison {
	res, err := CompareFiles([]*Samples{old, new}, DefaultGrouping(), opt)
	if err != nil { // the default grouping names no key a file could lack
		panic("results: Compare: " + err.Error())
	}
	return res.Comparisons
}

// statCache compares cells. A row measured once a side has statistics
// that depend only on which value is larger: they are worked out once
// for each order and copied, not again for each of 120,000 rows.
type statCache struct {
	once [3]*Comparison // by cmp.Compare(old, new) + 1
}

// compare compares the measurements ov (the baseline) and nv of row name
// in unit; means says that some came from another tool's log, dir is
// better(unit).
func (st *statCache) compare(name, unit string, ov, nv []float64, thr benchmath.Thresholds, means bool, dir float64) Comparison {
	if len(ov) == 1 && len(nv) == 1 && !math.IsNaN(ov[0]) && !math.IsNaN(nv[0]) {
		o := cmp.Compare(ov[0], nv[0]) + 1
		if st.once[o] == nil {
			c := compareCells(name, unit, ov, nv, thr, means, dir)
			if !(math.IsInf(c.Old.Lo, -1) && math.IsInf(c.Old.Hi, 1) && math.IsInf(c.New.Lo, -1) && math.IsInf(c.New.Hi, 1)) {
				return c // an interval of one value: worked out each time
			}
			c.Warnings = slices.Clip(c.Warnings)
			st.once[o] = &c
		}
		c := *st.once[o]
		c.Name, c.Unit, c.Means = name, unit, means
		c.Old.Center, c.New.Center = ov[0], nv[0]
		c.Delta = 0
		if c.Old.Center != c.New.Center {
			c.Delta = (c.New.Center - c.Old.Center) / c.Old.Center
		}
		c.Worse = dir*c.Delta < 0
		return c
	}
	return compareCells(name, unit, ov, nv, thr, means, dir)
}

// compareRow compares the measurements of row k in old (ov) and new (nv).
func compareRow(k sampleKey, ov, nv []float64, thr benchmath.Thresholds, old, new *Samples) Comparison {
	c := compareCells(k.name, k.unit, ov, nv, thr, old.Source != "" || new.Source != "", float64(better(k.unit, old, new)))
	c.Base, c.Col = old.Path, new.Path
	return c
}

// compareCells compares the measurements ov (the baseline) and nv of
// row name in unit, as compareRow.
func compareCells(name, unit string, ov, nv []float64, thr benchmath.Thresholds, means bool, dir float64) Comparison {
	assume := benchmath.AssumeNothing
	// NewSample sorts the values in place.
	s1 := benchmath.NewSample(slices.Clone(ov), &thr)
	s2 := benchmath.NewSample(slices.Clone(nv), &thr)
	test := assume.Compare(s1, s2)
	c := Comparison{Name: name, Unit: unit, OldN: len(s1.Values), NewN: len(s2.Values),
		Old: assume.Summary(s1, CompareConfidence), New: assume.Summary(s2, CompareConfidence),
		P: test.P, Significant: test.P <= test.Alpha, // as benchmath's FormatDelta
		Means: means}
	if c.Old.Center != c.New.Center {
		c.Delta = (c.New.Center - c.Old.Center) / c.Old.Center
	}
	c.Worse = dir*c.Delta < 0
	for _, w := range slices.Concat(c.Old.Warnings, c.New.Warnings, test.Warnings) {
		if !slices.ContainsFunc(c.Warnings, func(e error) bool { return e.Error() == w.Error() }) {
			c.Warnings = append(c.Warnings, w)
		}
	}
	return c
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
	// Sets of names, not searches of the other file's rows: a search per
	// row made 120,000 rows take 80 s.
	only := func(a, b *Samples) (names []string) {
		inB := make(map[string]bool, len(b.keys))
		for _, k := range b.keys {
			inB[k.name] = true
		}
		seen := map[string]bool{}
		for _, k := range a.keys {
			if !inB[k.name] && !seen[k.name] {
				seen[k.name] = true
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
	fileNotes(&b, []*Samples{old, new}, []string{oldLabel, newLabel})
	onlyOld, onlyNew := Unpaired(old, new)
	unpairedNotes(&b, "only in "+oldLabel, onlyOld)
	unpairedNotes(&b, "only in "+newLabel, onlyNew)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteNotes writes to w what WriteNotes writes for two files, for the
// files and tables of c: the rows of a table measured in its first column
// or another but not both are listed as "only in" the one when the
// table has two columns, "in A, not in B" when it has more.
func (c *Compared) WriteNotes(w io.Writer) error {
	var b strings.Builder
	fileNotes(&b, c.Files, labels(c.Files))
	for _, t := range c.Tables {
		prefix := ""
		if t.Config != "" {
			prefix = t.Config + ": "
		}
		for _, u := range t.Unpaired {
			if len(t.Cols) == 2 {
				unpairedNotes(&b, prefix+"only in "+u.Base, u.OnlyBase)
				unpairedNotes(&b, prefix+"only in "+u.Col, u.OnlyCol)
				continue
			}
			unpairedNotes(&b, prefix+"in "+u.Base+", not in "+u.Col, u.OnlyBase)
			unpairedNotes(&b, prefix+"in "+u.Col+", not in "+u.Base, u.OnlyCol)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fileNotes writes the warnings and notes of each of files, labelled.
func fileNotes(b *strings.Builder, files []*Samples, labels []string) {
	for _, f := range files {
		for _, e := range f.Warnings {
			fmt.Fprintf(b, "warning: %v\n", e)
		}
	}
	for i, f := range files {
		if f.Source != "" {
			fmt.Fprintf(b, "note: %s is a log of %s: one mean per row and placement (one more for each time the log measured a row again), "+
				"not each iteration's time; a change marked ? is of those means, and no test can call it significant "+
				"with fewer than %d measurements a side: concatenate the logs of several runs into each file to decide it\n",
				labels[i], f.Source, RunsToDecide(0))
		}
	}
	for i, f := range files {
		if sampled := f.Sampled(); len(sampled) > 0 {
			most := slices.Max(slices.Collect(maps.Values(sampled)))
			fmt.Fprintf(b, "note: %s measured %s more than %d times (up to %d): each is compared on a uniform sample of %d of its measurements\n",
				labels[i], Count(len(sampled), "row")+" (a unit each)", MaxRuns, most, MaxRuns)
		}
	}
}

// unpairedNotes writes a short line listing names, where, not compared.
func unpairedNotes(b *strings.Builder, where string, names []string) {
	n := len(names)
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "%s, not compared: %d row%s: %s", where, n, map[bool]string{true: "s"}[n > 1], strings.Join(names[:min(n, 3)], ", "))
	if n > 3 {
		fmt.Fprintf(b, " and %d more", n-3)
	}
	b.WriteString("\n")
}

// WriteComparison writes cs to w as benchstat would: a table per unit, with
// a line per row giving the old and new medians ± their confidence intervals
// (in percent), the change ("~" when not significant), the p-value and the
// measurements per side; "worse" marks a significant change for the worse.
// Each table ends with its distinct warnings. Labels head the columns.
func WriteComparison(w io.Writer, cs []Comparison, oldLabel, newLabel string) error {
	var tables []*CompareTable
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].Unit == cs[i].Unit {
			j++
		}
		t := &CompareTable{Unit: cs[i].Unit, Cols: []string{oldLabel, newLabel}}
		for k := i; k < j; k++ {
			t.Rows = append(t.Rows, CompareRow{Name: cs[k].Name, Cells: []*Comparison{&cs[k]}})
		}
		tables = append(tables, t)
		i = j
	}
	return writeTables(w, tables)
}

// WriteTables writes the tables of c to w as WriteComparison does, with
// a column and its change for each column after the first, and the
// table's key (Grouping.Table) on a line of its own where it changes.
func (c *Compared) WriteTables(w io.Writer) error {
	return writeTables(w, c.Tables)
}

// writeTables writes tables as WriteComparison does.
func writeTables(w io.Writer, tables []*CompareTable) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(tables) == 0 || !slices.ContainsFunc(tables, func(t *CompareTable) bool { return len(t.Rows) > 0 }) {
		bw.WriteString("no rows in both files\n")
		return bw.Flush()
	}
	config := ""
	first := true
	for _, t := range tables {
		if len(t.Rows) == 0 {
			continue
		}
		if !first {
			bw.WriteString("\n")
		}
		first = false
		if t.Config != config {
			if config = t.Config; config != "" {
				bw.WriteString(config + "\n")
			}
		}
		if err := writeTable(bw, t); err != nil {
			return err
		}
	}
	return bw.Flush()
}
