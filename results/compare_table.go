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

// tableCells are the lines of one table, each of tableCols right-aligned
// cells and a tail, kept in one buffer: a table of 120,000 rows is not
// 600,000 strings, and no tabwriter holds it all again to align it.
type tableCells struct {
	buf   []byte
	ends  []int32 // end in buf of each cell, tableCols+1 a line
	width [tableCols]int
	plain bool // no cell holds a byte that tabwriter would treat apart
}

// tableCols is the number of aligned cells of a line (name, old, new,
// change); the test that follows is its tail.
const tableCols = 4

// cell appends one cell of the current line; the tail is the last of a line.
func (t *tableCells) cell(s string) {
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
		f(i%(tableCols+1), t.buf[start:end])
		start = end
	}
}

// writeTable writes the comparisons of one unit.
func writeTable(b *bufio.Writer, cs []Comparison, oldLabel, newLabel string) error {
	nameWidth := len(cs[0].Unit)
	for _, c := range cs {
		nameWidth = max(nameWidth, len(c.Name))
	}
	// Numbers are right-aligned: every cell starts with its own spacing,
	// and names are padded to one width so that they read left-aligned.
	t := &tableCells{plain: true, ends: make([]int32, 0, (len(cs)+1)*(tableCols+1))}
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
	t.cell(pad(cs[0].Unit))
	t.cell("  " + oldLabel)
	t.cell("  " + newLabel)
	t.cell("  vs base")
	t.cell("")
	var warnings []string // distinct, in order, with how many rows have each
	count := map[string]int{}
	var line []byte
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
		t.cell(pad(c.Name))
		line = append(line[:0], "  "...)
		line = append(line, sc.Format(c.Old.Center)...)
		line = append(line, " ± "...)
		line = append(line, c.Old.PctRangeString()...)
		t.cell(string(line))
		line = append(line[:0], "  "...)
		line = append(line, sc.Format(c.New.Center)...)
		line = append(line, " ± "...)
		line = append(line, c.New.PctRangeString()...)
		t.cell(string(line))
		t.cell("  " + delta)
		line = append(line[:0], " ("...)
		line = append(line, benchmath.Comparison{P: c.P, N1: c.OldN, N2: c.NewN}.String()...)
		line = append(line, ')')
		if c.Significant && c.Worse {
			line = append(line, " worse"...)
		}
		t.cell(string(line))
		for _, w := range c.Warnings {
			if count[w.Error()]++; count[w.Error()] == 1 {
				warnings = append(warnings, w.Error())
			}
		}
	}
	if err := t.write(b); err != nil {
		return err
	}
	for _, w := range warnings {
		b.WriteString("warning: " + w + " (" + strconv.Itoa(count[w]) + " of " + strconv.Itoa(len(cs)) + " rows)\n")
	}
	return nil
}
