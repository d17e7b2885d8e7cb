package results

import (
	"cmp"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// Compared is what CompareFiles found.
type Compared struct {
	// Files are the files compared, each holding only the measurements
	// that the grouping's filter kept, in the order given.
	Files []*Samples
	// Tables are the comparison tables: by table key (Grouping.Table)
	// in the order benchproc sorts it, and within a key by unit,
	// sec/op first, then busbw-GB/s, algbw-GB/s and any other.
	Tables []*CompareTable
	// Comparisons are those of every table, table after table, row
	// after row, column after column.
	Comparisons []Comparison
	// Columns counts the distinct columns of all the tables.
	Columns int
}

// CompareTable is one table: one unit, one value of the table key.
type CompareTable struct {
	// Config is the table key beside the unit, as "key:value" pairs
	// separated by spaces, "" when Grouping.Table is empty.
	Config string
	Unit   string
	// Cols are the column labels; the others are compared with Cols[0].
	Cols []string
	// Rows are the rows measured in Cols[0] and in some other column,
	// with their comparisons, one per column after the first (nil where
	// the row has no measurement in that column).
	Rows []CompareRow
	// Unpaired are, by column after the first, the rows of the table's
	// key (in any unit) measured in that column or in the first but not
	// both: not compared.
	Unpaired []UnpairedRows
}

// CompareRow is one row of a CompareTable.
type CompareRow struct {
	Name  string
	Cells []*Comparison
}

// UnpairedRows are the rows measured in one of two columns only.
type UnpairedRows struct {
	Base, Col         string // the two columns' labels
	OnlyBase, OnlyCol []string
}

// cellKey places a measurement: its table (with its unit), row and column.
type cellKey struct{ table, row, col benchproc.Key }

// cell is the measurements of one place.
type cell struct {
	values  []float64
	residue []benchproc.Key // what the projection left out, each distinct once
	means   bool            // some came from another tool's log
}

// CompareFiles compares the measurements of files, grouped as g says (see
// Grouping): in each table and row, each column after the first with the
// first, with Compare's statistics. A column's label is its key's
// values, the path of the file for the default .file (see labels). It returns an error, one line naming the flag,
// for an expression that does not parse or names a key that no row has.
func CompareFiles(files []*Samples, g Grouping, opt CompareOptions) (*Compared, error) {
	ex, err := keysOf(files).resolve(g.exprs())
	if err != nil {
		if _, perr := g.parse(g.exprs()); perr != nil { // a syntax error first
			return nil, perr
		}
		return nil, err
	}
	gr, err := g.parse(ex)
	if err != nil {
		return nil, err
	}
	res := &Compared{}
	cells := map[cellKey]*cell{}
	tables := map[benchproc.Key]bool{}
	label := labels(files)
	for i, s := range files {
		kept := gr.place(s, label[i], cells, tables)
		res.Files = append(res.Files, kept)
	}
	res.build(gr, cells, tables, files, opt)
	return res, nil
}

// place puts the measurements of s that gr's filter keeps in cells,
// notes each table key, and returns s with those measurements only (s
// itself when it kept them all).
func (gr *grouper) place(s *Samples, label string, cells map[cellKey]*cell, tables map[benchproc.Key]bool) *Samples {
	// Units of each row, in file order.
	var names []string
	units := map[string][]string{}
	for _, k := range s.keys {
		if _, ok := units[k.name]; !ok {
			names = append(names, k.name)
		}
		units[k.name] = append(units[k.name], k.unit)
	}
	// A Result for each configuration, reused for all its rows: its
	// index of keys is built once.
	results := map[int]*benchfmt.Result{}
	all := true                               // the filter kept every measurement
	keys := make([]sampleKey, 0, len(s.keys)) // those it kept
	for _, name := range names {
		ci, ok := s.config.byName[name]
		idx := int(ci)
		if !ok {
			idx = -1
		}
		r := results[idx]
		if r == nil {
			var cfg []benchfmt.Config
			if idx >= 0 {
				cfg = slices.Clone(s.config.sets[idx])
			}
			r = &benchfmt.Result{Config: append(cfg, benchfmt.Config{Key: ".file", Value: []byte(label)})}
			results[idx] = r
		}
		r.Name = benchfmt.Name(name)
		r.Values = r.Values[:0]
		for _, u := range units[name] {
			v := benchfmt.Value{Unit: u}
			if u == "sec/op" { // as the file wrote it, for -filter .unit:ns/op
				v.OrigUnit = "ns/op"
			}
			r.Values = append(r.Values, v)
		}
		m, _ := gr.filter.Match(r)
		if !m.Any() {
			all = false
			continue
		}
		all = all && m.All()
		m.Apply(r)
		tableKeys := gr.table.ProjectValues(r)
		row, col, residue := gr.row.Project(r), gr.col.Project(r), gr.residue.Project(r)
		for i, v := range r.Values {
			sk := sampleKey{name, v.Unit}
			vals := s.values[sk]
			keys = append(keys, sk)
			tables[tableKeys[i]] = true
			ck := cellKey{tableKeys[i], row, col}
			c := cells[ck]
			if c == nil {
				// The file's values, not a copy: clipped, so that a
				// second file's values in this cell go elsewhere.
				c = &cell{values: slices.Clip(vals), residue: []benchproc.Key{residue}, means: s.Source != ""}
				cells[ck] = c
				continue
			}
			c.values = append(c.values, vals...)
			if !slices.Contains(c.residue, residue) {
				c.residue = append(c.residue, residue)
			}
			c.means = c.means || s.Source != ""
		}
	}
	if all {
		return s
	}
	kept := &Samples{Path: s.Path, Source: s.Source, Warnings: s.Warnings, keys: keys, values: make(map[sampleKey][]float64, len(keys)),
		units: s.units, seen: s.seen, dropped: s.dropped, config: s.config}
	for _, k := range keys {
		kept.values[k] = s.values[k]
	}
	return kept
}

// build makes the tables and comparisons of cells.
func (res *Compared) build(gr *grouper, cells map[cellKey]*cell, tables map[benchproc.Key]bool, files []*Samples, opt CompareOptions) {
	thr := benchmath.DefaultThresholds
	if opt.Alpha > 0 {
		thr.CompareAlpha = opt.Alpha
	}
	// The rows and columns of each table, and all columns.
	type place struct{ rows, cols map[benchproc.Key]bool }
	places := map[benchproc.Key]*place{}
	allCols := map[string]bool{}
	for k := range cells {
		p := places[k.table]
		if p == nil {
			p = &place{map[benchproc.Key]bool{}, map[benchproc.Key]bool{}}
			places[k.table] = p
		}
		p.rows[k.row], p.cols[k.col] = true, true
		allCols[label(k.col)] = true
	}
	res.Columns = len(allCols)
	tkeys := sortKeys(tables)
	// All rows and columns sorted once: each table's are these, in this
	// order, less those it lacks.
	allRows, allColKeys := map[benchproc.Key]bool{}, map[benchproc.Key]bool{}
	for k := range cells {
		allRows[k.row], allColKeys[k.col] = true, true
	}
	rowOrder, colOrder := sortKeys(allRows), sortKeys(allColKeys)
	// Tables of one key stay together, in the order of their first,
	// and within a key go by unit as Compare sorts them.
	config := func(k benchproc.Key) string {
		var parts []string
		for _, f := range gr.table.FlattenedFields() {
			if f != gr.unit {
				if v := k.Get(f); v != "" {
					parts = append(parts, f.Name+":"+v)
				}
			}
		}
		return strings.Join(parts, " ")
	}
	firstOf := map[string]int{}
	for i, k := range tkeys {
		if _, ok := firstOf[config(k)]; !ok {
			firstOf[config(k)] = i
		}
	}
	slices.SortStableFunc(tkeys, func(a, b benchproc.Key) int {
		return cmp.Or(cmp.Compare(firstOf[config(a)], firstOf[config(b)]),
			cmp.Compare(unitRank(a.Get(gr.unit)), unitRank(b.Get(gr.unit))), strings.Compare(a.Get(gr.unit), b.Get(gr.unit)))
	})
	var st statCache
	// Each comparison is of a row's cell in a column after the first:
	// there are at most rows x (columns-1) a table, and the cells of the
	// tables point into this array, which never grows.
	rowsOf, colsOf := make([][]benchproc.Key, len(tkeys)), make([][]benchproc.Key, len(tkeys))
	most := 0
	for i, tk := range tkeys {
		rowsOf[i], colsOf[i] = within(rowOrder, places[tk].rows), within(colOrder, places[tk].cols)
		most += len(rowsOf[i]) * (len(colsOf[i]) - 1)
	}
	res.Comparisons = make([]Comparison, 0, most)
	for i, tk := range tkeys {
		rows, cols := rowsOf[i], colsOf[i]
		unit := tk.Get(gr.unit)
		t := &CompareTable{Config: config(tk), Unit: unit, Rows: make([]CompareRow, 0, len(rows))}
		for _, c := range cols {
			t.Cols = append(t.Cols, label(c))
		}
		dir := float64(better(unit, files...))
		for _, r := range rows {
			base := cells[cellKey{tk, r, cols[0]}]
			if base == nil {
				continue
			}
			row := CompareRow{Name: label(r), Cells: make([]*Comparison, len(cols)-1)}
			for j, c := range cols[1:] {
				other := cells[cellKey{tk, r, c}]
				if other == nil {
					continue
				}
				cmp := st.compare(row.Name, unit, base.values, other.values, thr, base.means || other.means, dir)
				cmp.Base, cmp.Col, cmp.Table = t.Cols[0], t.Cols[j+1], t.Config
				for _, c := range []*cell{base, other} {
					if w := varies(c); w != nil && !slices.ContainsFunc(cmp.Warnings, func(e error) bool { return e.Error() == w.Error() }) {
						cmp.Warnings = append(cmp.Warnings, w)
					}
				}
				res.Comparisons = append(res.Comparisons, cmp)
				row.Cells[j] = &res.Comparisons[len(res.Comparisons)-1]
			}
			if slices.ContainsFunc(row.Cells, func(c *Comparison) bool { return c != nil }) {
				t.Rows = append(t.Rows, row)
			}
		}
		res.Tables = append(res.Tables, t)
	}
	res.unpaired(cells, tkeys, config, rowOrder, colOrder)
}
