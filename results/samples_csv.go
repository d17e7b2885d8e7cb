package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// csvRequired are the columns that name a row and hold its measurements.
var csvRequired = []string{"schema_version", "op", "dtype", "redop", "root", "in_place",
	"size_bytes", "backend", "ranks", "time_us", "algbw_GBps", "busbw_GBps"}

// readCSV reads the rows of one CSV file or several concatenated: a header
// met again sets the columns anew. Rows are kept by what names them, with
// their measurements, not one by one: a file of one row measured a
// million times (-N 0) takes the memory of one row and MaxRuns values.
func (s *Samples) readCSV(r io.Reader) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked against the latest header
	cr.Comment = '#'
	cr.ReuseRecord = true
	var col map[string]int // column index by name
	var width int          // fields of the latest header
	var rows csvRows
	for {
		row, err := cr.Read()
		var pe *csv.ParseError
		switch {
		case err == io.EOF:
			rows.addTo(s)
			return nil
		case errors.As(err, &pe):
			return fmt.Errorf("%s:%d: %w", s.Path, pe.Line, pe.Err)
		case err != nil:
			return fmt.Errorf("%s: %w", s.Path, err)
		}
		line, _ := cr.FieldPos(0)
		if isHeader(row) {
			col, width = map[string]int{}, len(row)
			for i, name := range row {
				col[name] = i
			}
			var missing []string
			for _, c := range csvRequired {
				if _, ok := col[c]; !ok {
					missing = append(missing, c)
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("%s:%d: the CSV header has no %s column%s", s.Path, line, strings.Join(missing, ", "),
					map[bool]string{true: "s"}[len(missing) > 1])
			}
			continue
		}
		switch {
		case col == nil:
			err = errors.New("a row before the CSV header (a line with a schema_version column)")
		case len(row) != width:
			err = fmt.Errorf("%d fields, the header has %d", len(row), width)
		default:
			var r csvRow
			r, err = parseCSVRow(func(c string) string {
				if i, ok := col[c]; ok {
					return row[i]
				}
				return "" // a column added after the file was written
			})
			rows.add(r)
			// Rows convert read from another tool's log are one mean
			// each, as the log itself (see Compare's Means).
			if src := get(row, col, "source"); src != "" && src != SourceOurs {
				s.Source = src
			}
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", s.Path, line, err)
		}
	}
}

// get returns the field of row in column c, "" when the header has none.
func get(row []string, col map[string]int, c string) string {
	if i, ok := col[c]; ok && i < len(row) {
		return row[i]
	}
	return ""
}

// csvRow is the part of a CSV row that Samples keeps.
type csvRow struct {
	rec       Record // what names the row, AlgoRequested aside
	backend   string
	ranks     int
	run       string // run_id
	requested string // algo_requested
	host      string
	source    string // "" for hccl-test's own rows
	values    []benchfmt.Value
}

// csvGroup is the rows of a CSV file that one name and requested
// algorithm name, in one run: their measurements, by unit.
type csvGroup struct {
	key    csvName // the fields its name is made of, once its file is read
	values [len(csvUnits)]kept
	// host and source are those of the group's first row: its file
	// configuration with its backend and ranks.
	host, source string
}

// csvUnits are the units of a CSV row's measurements, in the order
// parseCSVRow gives them.
var csvUnits = [...]string{"sec/op", unitAlgBW, unitBusBW}

// kept are the measurements of one row in one unit, as Samples.add keeps
// them: all up to MaxRuns, then a uniform sample of seen.
type kept struct {
	vals []float64
	seen int64
}

func (k *kept) add(v float64, rng *rand.Rand) {
	if k.seen++; len(k.vals) < MaxRuns {
		k.vals = append(k.vals, v)
	} else if j := rng.Int64N(k.seen); j < MaxRuns {
		k.vals[j] = v
	}
}

// csvRows are a CSV file's rows, as groups in the order of their first row.
type csvRows struct {
	groups []*csvGroup
	index  map[csvName]*csvGroup
	algos  map[string]map[string]bool // requested algorithms by run
	rng    *rand.Rand
}

// csvName is what names a row of a CSV file (see BenchFmt.name), and the
// run and algorithm it was requested with: the fields, not the name
// written out, which is made once a group.
type csvName struct {
	op, dtype, redop, group, backend, run, requested string
	root, buckets, ranks                             int
	bytes                                            int64
	inPlace                                          bool
}

// add adds the measurements of r to its group.
func (rs *csvRows) add(r csvRow) {
	if rs.index == nil {
		rs.index, rs.algos, rs.rng = map[csvName]*csvGroup{}, map[string]map[string]bool{}, rand.New(rand.NewPCG(1, 2))
	}
	k := csvName{op: r.rec.Op, dtype: r.rec.DType, redop: r.rec.RedOp, group: r.rec.Group, backend: r.backend, run: r.run,
		requested: r.requested, root: r.rec.Root, buckets: r.rec.Buckets, ranks: r.ranks, bytes: r.rec.Bytes, inPlace: r.rec.InPlace}
	g := rs.index[k]
	if g == nil {
		// The key's fields are cut from the row's line: copies keep
		// only themselves, not every line that made a group.
		for _, f := range []*string{&k.op, &k.dtype, &k.redop, &k.group, &k.backend, &k.run, &k.requested} {
			*f = strings.Clone(*f)
		}
		g = &csvGroup{key: k, host: strings.Clone(r.host), source: strings.Clone(r.source)}
		rs.index[k] = g
		rs.groups = append(rs.groups, g)
		if rs.algos[r.run] == nil {
			rs.algos[r.run] = map[string]bool{}
		}
		rs.algos[r.run][r.requested] = true
	}
	for _, v := range r.values {
		g.values[slices.Index(csvUnits[:], v.Unit)].add(v.Value, rs.rng)
	}
}

// addTo adds the measurements of the rows to s. A run whose rows asked
// for several algorithms (--algo auto,ring) names each row with its own,
// as its Go benchmark lines do.
func (rs *csvRows) addTo(s *Samples) {
	// Room for every row at once, not a map grown and rehashed as 120,000
	// rows come in.
	if len(s.values) == 0 {
		s.values = make(map[sampleKey][]float64, len(csvUnits)*len(rs.groups))
	}
	s.keys = slices.Grow(s.keys, len(csvUnits)*len(rs.groups))
	configs := map[[4]string][]benchfmt.Config{}
	for _, g := range rs.groups {
		k := g.key
		rec := Record{Op: k.op, DType: k.dtype, RedOp: k.redop, Group: k.group, Root: k.root, Buckets: k.buckets,
			Bytes: k.bytes, InPlace: k.inPlace}
		if len(rs.algos[k.run]) > 1 {
			rec.AlgoRequested = k.requested
		}
		name := (&BenchFmt{h: Header{Backend: k.backend, Ranks: k.ranks}}).name(rec)
		h := Header{Backend: k.backend, Ranks: k.ranks, Host: g.host, Source: g.source}
		cfg, ok := configs[h.runKey()]
		if !ok { // made once a run, not once a row
			cfg = headerConfig(h, false)
			configs[h.runKey()] = cfg
		}
		s.config.set(name, cfg)
		for u, k := range g.values {
			if sk := (sampleKey{name, csvUnits[u]}); len(k.vals) > 0 && s.values[sk] == nil {
				// A row's first values: the group's, not a copy.
				s.keys = append(s.keys, sk)
				s.values[sk] = k.vals
			} else {
				for _, v := range k.vals {
					s.add(name, csvUnits[u], v)
				}
			}
			// The group's sample stands for more measurements.
			if k.seen > int64(len(k.vals)) {
				sk := sampleKey{name, csvUnits[u]}
				if s.seen == nil {
					s.seen, s.rng = map[sampleKey]int64{}, rand.New(rand.NewPCG(1, 2))
				}
				s.seen[sk] = max(s.seen[sk], int64(len(s.values[sk]))) + k.seen - int64(len(k.vals))
			}
		}
	}
}

// parseCSVRow reads the row whose fields get returns.
func parseCSVRow(get func(column string) string) (csvRow, error) {
	if v := get("schema_version"); v != strconv.Itoa(SchemaVersion) {
		return csvRow{}, fmt.Errorf("schema_version %q: this hccl-test reads version %d", v, SchemaVersion)
	}
	var ints [3]int64
	for i, c := range []string{"root", "size_bytes", "ranks"} {
		var err error
		if ints[i], err = strconv.ParseInt(get(c), 10, 64); err != nil {
			return csvRow{}, fmt.Errorf("%s %q is not an integer", c, get(c))
		}
	}
	inPlace, err := strconv.ParseBool(get("in_place"))
	if err != nil {
		return csvRow{}, fmt.Errorf("in_place %q is not true or false", get("in_place"))
	}
	r := csvRow{rec: Record{Op: get("op"), DType: get("dtype"), RedOp: get("redop"),
		Root: int(ints[0]), InPlace: inPlace, Bytes: ints[1], Group: get("group")},
		backend: get("backend"), ranks: int(ints[2]), run: get("run_id"), requested: get("algo_requested"),
		host: get("host"), source: strings.TrimPrefix(get("source"), SourceOurs)}
	if b := get("buckets"); b != "" { // absent from files written before --fusion
		if r.rec.Buckets, err = strconv.Atoi(b); err != nil {
			return csvRow{}, fmt.Errorf("buckets %q is not an integer", b)
		}
	}
	for _, u := range []struct {
		col, unit string
		scale     float64
	}{{"time_us", "sec/op", 1e-6}, {"algbw_GBps", unitAlgBW, 1}, {"busbw_GBps", unitBusBW, 1}} {
		if f := get(u.col); f != "" { // empty: unknown
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return csvRow{}, fmt.Errorf("%s %q is not a number", u.col, f)
			}
			if why := CheckMeasurement(v*u.scale, u.unit); why != "" {
				return csvRow{}, fmt.Errorf("%s %s: %s", u.col, f, why)
			}
			r.values = append(r.values, benchfmt.Value{Value: v * u.scale, Unit: u.unit})
		}
	}
	return r, nil
}

// runKey is what a CSV row's file configuration is made of.
func (h Header) runKey() [4]string {
	return [4]string{h.Backend, strconv.Itoa(h.Ranks), h.Host, h.Source}
}
