package results

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchproc"
)

// unpaired fills each table's Unpaired: rows of its key, in any unit,
// in its first column or another but not both. Only the first table of a
// key carries them.
func (res *Compared) unpaired(cells map[cellKey]*cell, tkeys []benchproc.Key, config func(benchproc.Key) string, rowOrder, colOrder []benchproc.Key) {
	type rc struct {
		cfg      string
		row, col benchproc.Key
	}
	in := map[rc]bool{}
	rowsOf, colsOf := map[string]map[benchproc.Key]bool{}, map[string]map[benchproc.Key]bool{}
	cfgOf := map[benchproc.Key]string{} // a table key's config, made once
	for _, tk := range tkeys {
		cfgOf[tk] = config(tk)
	}
	for k := range cells {
		cfg := cfgOf[k.table]
		in[rc{cfg, k.row, k.col}] = true
		if rowsOf[cfg] == nil {
			rowsOf[cfg], colsOf[cfg] = map[benchproc.Key]bool{}, map[benchproc.Key]bool{}
		}
		rowsOf[cfg][k.row], colsOf[cfg][k.col] = true, true
	}
	done := map[string]bool{}
	for i, tk := range tkeys {
		cfg := cfgOf[tk]
		if done[cfg] {
			continue
		}
		done[cfg] = true
		rows, cols := within(rowOrder, rowsOf[cfg]), within(colOrder, colsOf[cfg])
		t := res.Tables[i]
		for _, c := range cols[1:] {
			u := UnpairedRows{Base: label(cols[0]), Col: label(c)}
			for _, r := range rows {
				switch b, o := in[rc{cfg, r, cols[0]}], in[rc{cfg, r, c}]; {
				case b && !o:
					u.OnlyBase = append(u.OnlyBase, label(r))
				case o && !b:
					u.OnlyCol = append(u.OnlyCol, label(r))
				}
			}
			if len(u.OnlyBase)+len(u.OnlyCol) > 0 {
				t.Unpaired = append(t.Unpaired, u)
			}
		}
	}
}

// varies returns benchstat's warning for a cell whose measurements
// differ in what the projection left out, nil for one that does not.
func varies(c *cell) error {
	if len(c.residue) < 2 {
		return nil
	}
	fields := benchproc.NonSingularFields(c.residue)
	if len(fields) == 0 {
		return nil
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return &variesError{strings.Join(names, ", ")}
}

// variesError is benchstat's warning for a cell that holds measurements
// of different configurations.
type variesError struct{ fields string }

func (e *variesError) Error() string { return "benchmarks vary in " + e.fields }

// label is a key's values as a row's name or a column's label.
func label(k benchproc.Key) string {
	return cmp.Or(k.StringValues(), "-")
}

// unitRank orders units as Compare does: time first, then bus
// bandwidth, which compares across rank counts, algbw, and any other.
func unitRank(unit string) int {
	return cmp.Or(slices.Index([]string{"sec/op", unitBusBW, unitAlgBW}, unit)+1, 4)
}

// sortKeys returns the keys of m sorted as benchproc sorts them.
func sortKeys[V any](m map[benchproc.Key]V) []benchproc.Key {
	keys := slices.Collect(maps.Keys(m))
	benchproc.SortKeys(keys)
	return keys
}

// labels returns the .file of each of files: its path, and for a path
// given again, the path and "#2", "#3", ...: a file compared with itself
// is two columns.
func labels(files []*Samples) []string {
	seen := map[string]int{}
	l := make([]string, len(files))
	for i, s := range files {
		l[i] = s.Path
		if seen[s.Path]++; seen[s.Path] > 1 {
			l[i] = s.Path + "#" + strconv.Itoa(seen[s.Path])
		}
	}
	return l
}

// within returns the keys of order that are in set, in that order.
func within(order []benchproc.Key, set map[benchproc.Key]bool) []benchproc.Key {
	if len(set) == len(order) {
		return order
	}
	keys := make([]benchproc.Key, 0, len(set))
	for _, k := range order {
		if set[k] {
			keys = append(keys, k)
		}
	}
	return keys
}
