package results

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// tabwriterTable writes one unit's table through a tabwriter, as
// writeTable did before it aligned the columns itself.
func tabwriterTable(b *strings.Builder, cs []Comparison, oldLabel, newLabel string) {
	nameWidth := len(cs[0].Unit)
	for _, c := range cs {
		nameWidth = max(nameWidth, len(c.Name))
	}
	tw := tabwriter.NewWriter(b, 0, 0, 0, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t  %s\t  %s\t  vs base\t\n", nameWidth, cs[0].Unit, oldLabel, newLabel)
	var warnings []string
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

// TestWriteTableAsTabwriter wants the table writeTable aligns itself to be
// byte for byte the one a tabwriter made, with names of several widths,
// names in other scripts (widths in runes), names holding a tab or a
// newline (which a tabwriter takes as cell and line ends), and labels
// wider than every cell.
func TestWriteTableAsTabwriter(t *testing.T) {
	names := func(ns ...string) *Samples {
		s := &Samples{Path: "x", values: map[sampleKey][]float64{}}
		for i, n := range ns {
			for j := range 5 {
				s.add(n, "sec/op", float64(10+i+j)*1e-6)
				s.add(n, unitBusBW, float64(1+i*1000+j))
			}
		}
		return s
	}
	tests := []struct {
		name             string
		rows             []string
		oldLabel, newLab string
	}{
		{"ascii", []string{"AllReduce/size=4B", "AllReduce/size=1MiB", "Broadcast/backend=shm/size=1GiB"}, "old", "new"},
		{"runes", []string{"AllReduce/größe=4B", "Всё/size=1MiB", "x"}, "alt", "neu"},
		{"tab in a name", []string{"AllReduce\tsize=4B", "AllReduce/size=8B"}, "old", "new"},
		{"newline in a name", []string{"AllReduce\nsize=4B", "AllReduce/size=8B"}, "old", "new"},
		{"escape byte", []string{"AllReduce\xffsize=4B\xff", "AllReduce/size=8B"}, "old", "new"},
		{"wide labels", []string{"a", "b"}, "a-very-long-label-for-the-old-file.csv", "new-€-label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := names(tt.rows...), names(tt.rows...)
			for k, v := range new.values {
				for i := range v {
					v[i] *= 1.5
				}
				new.values[k] = v
			}
			cs := Compare(old, new, CompareOptions{})
			var want strings.Builder
			for i := 0; i < len(cs); {
				j := i + 1
				for j < len(cs) && cs[j].Unit == cs[i].Unit {
					j++
				}
				if i > 0 {
					want.WriteString("\n")
				}
				tabwriterTable(&want, cs[i:j], tt.oldLabel, tt.newLab)
				i = j
			}
			var got strings.Builder
			if err := WriteComparison(&got, cs, tt.oldLabel, tt.newLab); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("got\n%s\nwant (tabwriter)\n%s", got.String(), want.String())
			}
		})
	}
}

// TestCompareOnceASide wants the rows measured once a side, whose
// statistics Compare works out once for each order of the two values,
// compared as a row of their own is: old lower, higher, equal, zero and
// infinite, in each unit.
func TestCompareOnceASide(t *testing.T) {
	pairs := [][2]float64{{1, 2}, {2, 1}, {3, 3}, {0, 1}, {1, 0}, {0, 0}, {5, math.Inf(1)}, {math.Copysign(0, -1), 0}, {2e-6, 1e-6}}
	old := &Samples{Path: "old", values: map[sampleKey][]float64{}}
	new := &Samples{Path: "new", values: map[sampleKey][]float64{}}
	for i, p := range pairs {
		for _, unit := range []string{"sec/op", unitBusBW, "widgets"} {
			name := fmt.Sprintf("row%d", i)
			old.add(name, unit, p[0])
			new.add(name, unit, p[1])
		}
	}
	cs := Compare(old, new, CompareOptions{})
	if len(cs) != 3*len(pairs) {
		t.Fatalf("%d comparisons, want %d", len(cs), 3*len(pairs))
	}
	for _, c := range cs {
		k := sampleKey{c.Name, c.Unit}
		want := compareRow(k, old.values[k], new.values[k], benchmath.DefaultThresholds, old, new)
		if got, want := fmt.Sprintf("%+v", c), fmt.Sprintf("%+v", want); got != want {
			t.Errorf("%s %s: got\n%s\nwant\n%s", c.Name, c.Unit, got, want)
		}
	}
}
