package results

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// tableCells are the lines of one table, each of cols right-aligned
// cells and a tail, kept in one buffer: a table of 120,000 rows is not
// 600,000 strings, and no tabwriter holds it all again to align it.
type tableCells struct {
	buf   []byte
	ends  []int32 // end in buf of each cell, cols+1 a line
	cols  int     // aligned cells of a line
	width []int   // of each aligned column
	plain bool    // no cell holds a byte that tabwriter would treat apart
}

// newTableCells returns the cells of a table comparing k columns with
// a baseline, each line: the name, the baseline, and for each column
// its value, its change and its test, the last test being the tail.
func newTableCells(k, rows int) *tableCells {
	cols := 1 + 3*k
	return &tableCells{plain: true, cols: cols, width: make([]int, cols), ends: make([]int32, 0, (rows+1)*(cols+1))}
}

// cell appends one cell of the current line; the tail is the last of a line.
func (t *tableCells) cell(s string) {
	tableCols := t.cols
	col := len(t.ends) % (tableCols + 1)
	t.buf = append(t.buf, s...)
	t.ends = append(t.ends, int32(len(t.buf)))
	if strings.ContainsAny(s, "\t\v\n\f") || strings.IndexByte(s, tabwriter.Escape) >= 0 {
		t.plain = false
	}
	if col < tableCols {
		n := len(s)
		if !isASCII(s) {
			n = utf8.RuneCountInString(s)
		}
		t.width[col] = max(t.width[col], n)
	}
}

// asciiBytes reports whether s is all ASCII, as isASCII.
func asciiBytes(s []byte) bool {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isASCII reports whether s is all ASCII: its width is its length.
func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// write writes the lines to w as a tabwriter.AlignRight with no padding
// would (each column as wide as its widest cell, text at its right), or
// through a tabwriter when a cell holds a tab, a newline or an escape.
func (t *tableCells) write(w *bufio.Writer) error {
	tableCols := t.cols
	if !t.plain {
		tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
		t.each(func(col int, s []byte) {
			tw.Write(s)
			if col < tableCols {
				tw.Write([]byte{'\t'})
			} else {
				tw.Write([]byte{'\n'})
			}
		})
		return tw.Flush()
	}
	const spaces = "                                                                "
	t.each(func(col int, s []byte) {
		if col < tableCols {
			n := len(s)
			if !asciiBytes(s) {
				n = utf8.RuneCount(s)
			}
			for pad := t.width[col] - n; pad > 0; pad -= len(spaces) {
				w.WriteString(spaces[:min(pad, len(spaces))])
			}
		}
		w.Write(s)
		if col == tableCols {
			w.WriteByte('\n')
		}
	})
	return nil
}

// each calls f with each cell in order and its column.
func (t *tableCells) each(f func(col int, s []byte)) {
	start := int32(0)
	for i, end := range t.ends {
		f(i%(t.cols+1), t.buf[start:end])
		start = end
	}
}

// writeTable writes the comparisons of one table: a line per row, with
// the baseline's median and, for each other column, its median, the
// change and the test.
func writeTable(b *bufio.Writer, tab *CompareTable) error {
	nameWidth := len(tab.Unit)
	for _, r := range tab.Rows {
		nameWidth = max(nameWidth, len(r.Name))
	}
	k := len(tab.Cols) - 1
	// Numbers are right-aligned: every cell starts with its own spacing,
	// and names are padded to one width so that they read left-aligned.
	t := newTableCells(k, len(tab.Rows))
	pad := func(s string) string { // as fmt's %-*s: a width in runes
		n := len(s)
		if !isASCII(s) {
			n = utf8.RuneCountInString(s)
		}
		if n >= nameWidth {
			return s
		}
		return s + strings.Repeat(" ", nameWidth-n)
	}
	t.cell(pad(tab.Unit))
	t.cell("  " + tab.Cols[0])
	for _, l := range tab.Cols[1:] {
		t.cell("  " + l)
		t.cell("  vs base")
		t.cell("")
	}
	var warnings []string // distinct, in order, with how many rows have each
	count := map[string]int{}
	var line []byte
	summary := func(sc benchunit.Scaler, s benchmath.Summary) string {
		line = append(line[:0], "  "...)
		line = append(line, sc.Format(s.Center)...)
		line = append(line, " ± "...)
		line = append(line, s.PctRangeString()...)
		return string(line)
	}
	centers := make([]float64, 0, len(tab.Cols))
	for _, r := range tab.Rows {
		var base *Comparison
		centers = centers[:0]
		for _, c := range r.Cells {
			if c != nil {
				if base == nil {
					base = c
					centers = append(centers, c.Old.Center)
				}
				centers = append(centers, c.New.Center)
			}
		}
		sc := benchunit.CommonScale(centers, benchunit.ClassOf(tab.Unit))
		t.cell(pad(r.Name))
		t.cell(summary(sc, base.Old))
		seen := map[string]bool{}
		for _, c := range r.Cells {
			if c == nil {
				t.cell("")
				t.cell("")
				t.cell("")
				continue
			}
			t.cell(summary(sc, c.New))
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
			t.cell("  " + delta)
			line = append(line[:0], " ("...)
			line = append(line, benchmath.Comparison{P: c.P, N1: c.OldN, N2: c.NewN}.String()...)
			line = append(line, ')')
			if c.Significant && c.Worse {
				line = append(line, " worse"...)
			}
			t.cell(string(line))
			for _, w := range c.Warnings {
				if !seen[w.Error()] {
					seen[w.Error()] = true
					if count[w.Error()]++; count[w.Error()] == 1 {
						warnings = append(warnings, w.Error())
					}
				}
			}
		}
	}
	if err := t.write(b); err != nil {
		return err
	}
	for _, w := range warnings {
		b.WriteString("warning: " + w + " (" + strconv.Itoa(count[w]) + " of " + strconv.Itoa(len(tab.Rows)) + " rows)\n")
	}
	return nil
}
