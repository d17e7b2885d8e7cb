package peerlog

import (
	"strings"
)

// colKind is what one column of a text table holds.
type colKind int

const (
	cSkip  colKind = iota // a column the reader does not use: one field
	cSize                 // size in bytes
	cCount                // elements
	cType                 // element type
	cRedop                // reduction
	cRoot                 // root rank
	cTime                 // time of one op: starts a placement's group of columns
	cAlgBW
	cBusBW
	cWrong // #wrong: a count of wrong elements, or N/A
	cError // error / res: the largest error, not a count
	cMin   // i_min
	cMax   // i_max
	cP99   // i_p99
	cStamp // -S's timestamp: two fields, date and time
)

// layout is the shape of a text table's rows, from its header.
type layout struct {
	cols  []colKind
	scale float64 // time unit in microseconds: 1, or 1000 for NCCL 1's milliseconds
	// places says, for each group of columns (from a time column to the
	// next), whether it is in-place; placeKnown whether the log says it.
	places     []bool
	placeKnown bool
	tool       string
}

// groups returns the number of placement groups of l.
func (l *layout) groups() int {
	n := 0
	for _, c := range l.cols {
		if c == cTime {
			n++
		}
	}
	return n
}

// headerNames maps column names, lower case, without a unit in
// parentheses, to what the column holds.
var headerNames = map[string]colKind{
	"size": cSize, "bytes": cSize, "count": cCount, "n": cCount,
	"type": cType, "redop": cRedop, "op": cRedop, "root": cRoot,
	"time": cTime, "cputime": cTime, "algbw": cAlgBW, "busbw": cBusBW,
	"#wrong": cWrong, "#ers": cWrong, "wrong": cWrong, "error": cError, "res": cError,
	"i_min": cMin, "i_max": cMax, "i_p99": cP99, "timestamp": cStamp,
}

// parseHeader reads a table's column header line (its '#' removed), such
// as nccl-tests' "size count type redop root time algbw busbw #wrong ..."
// or nccom-test's "size(B) count(elems) type time(us) algbw(GB/s)
// busbw(GB/s)". ok is false for any other line.
func parseHeader(fields []string) (l *layout, ok bool) {
	if len(fields) < 3 {
		return nil, false
	}
	l = &layout{scale: 1}
	unitSeen := false
	var hasTime, hasBW bool
	for i, f := range fields {
		name, unit, _ := strings.Cut(strings.ToLower(f), "(")
		k, known := headerNames[name]
		if !known {
			k = cSkip
		}
		if i == 0 && k != cSize {
			return nil, false
		}
		switch k {
		case cTime:
			hasTime = true
			switch strings.TrimSuffix(unit, ")") {
			case "ms":
				l.scale, unitSeen = 1000, true
			case "us":
				unitSeen = true
			}
		case cAlgBW, cBusBW:
			hasBW = true
		}
		l.cols = append(l.cols, k)
	}
	if !hasTime || !hasBW {
		return nil, false
	}
	// NCCL 1's tests name their columns "bytes N type op" and print
	// times in milliseconds, without a units line.
	if !unitSeen && strings.EqualFold(fields[0], "bytes") && len(fields) > 1 && fields[1] == "N" {
		l.scale = 1000
	}
	n := l.groups()
	l.places = make([]bool, n)
	if n == 2 { // nccl-tests: out-of-place, then in-place
		l.places[1], l.placeKnown = true, true
	}
	return l, true
}

// setPlaces applies a line such as "out-of-place in-place" (nccl-tests)
// or "in-place" (rccl-tests -O 0) above a header to l.
func (l *layout) setPlaces(words []bool) {
	if len(words) == l.groups() {
		copy(l.places, words)
		l.placeKnown = true
	}
}

// placeWords reads the placement line above a header: the placements it
// names, in order (true for in-place); nil for any other line.
func placeWords(fields []string) []bool {
	var p []bool
	for _, f := range fields {
		switch strings.ToLower(f) {
		case "out-of-place":
			p = append(p, false)
		case "in-place":
			p = append(p, true)
		}
	}
	return p
}

// tableRow reads the fields of one row of a table laid out as l, and
// returns a Row per placement group that is complete: a row cut by an
// error message keeps the groups before the cut. base carries what the
// segment knows (tool, op, ranks, host).
func tableRow(tok []string, l *layout, base Row) []Row {
	r := base
	r.Wrong = -1
	i, ci := 0, 0
	for ; ci < len(l.cols) && l.cols[ci] != cTime; ci++ {
		if i >= len(tok) {
			return nil
		}
		t := tok[i]
		i++
		switch l.cols[ci] {
		case cSize:
			v, ok := parseSize(t)
			if !ok {
				return nil
			}
			r.Bytes = v
		case cCount:
			v, ok := parseSize(t)
			if !ok {
				return nil
			}
			r.Count, r.Known = v, r.Known|KnowCount
		case cType:
			if !word.MatchString(t) {
				return nil
			}
			r.DType = dtypeName(t)
		case cRedop:
			if !word.MatchString(t) {
				return nil
			}
			r.RedOp = redopName(t)
		case cRoot:
			v, ok := parseRoot(t)
			if !ok {
				return nil
			}
			r.Root, r.Known = v, r.Known|KnowRoot
		case cStamp:
			i++
		}
	}
	var rows []Row
	for g := 0; ci < len(l.cols); g++ {
		end := ci + 1
		for end < len(l.cols) && l.cols[end] != cTime {
			end++
		}
		row, ok := group(tok, &i, l.cols[ci:end], l.scale, r)
		if !ok {
			break // cut: what follows is not this table's
		}
		if g < len(l.places) {
			row.InPlace = l.places[g]
			if l.placeKnown {
				row.Known |= KnowPlace
			}
		}
		if row.Known&(KnowTime|KnowAlgBW|KnowBusBW) != 0 {
			rows = append(rows, row)
		}
		ci = end
	}
	return rows
}

// parseRoot reads a root field: a rank, or -1 for none.
func parseRoot(s string) (int, bool) {
	v, ok := parseSize(strings.TrimPrefix(s, "-"))
	if !ok || v > 1<<30 || (strings.HasPrefix(s, "-") && v != 1) {
		return 0, false
	}
	if strings.HasPrefix(s, "-") {
		return -1, true
	}
	return int(v), true
}

// group reads one placement's columns from tok at *i.
func group(tok []string, i *int, cols []colKind, scale float64, r Row) (Row, bool) {
	for _, c := range cols {
		if c == cStamp {
			*i += 2
			continue
		}
		if *i >= len(tok) {
			return r, false
		}
		t := tok[*i]
		*i++
		var f figure
		switch c {
		case cTime, cAlgBW, cBusBW, cMin, cMax, cP99:
			if f = parseFigure(t); !f.ok {
				return r, false
			}
		}
		switch c {
		case cTime:
			if f.known && f.v > 0 && f.v*scale < 1e15 {
				r.TimeUS, r.Known = f.v*scale, r.Known|KnowTime
			}
		case cAlgBW:
			if f.known {
				r.AlgBW, r.Known = f.v, r.Known|KnowAlgBW
			}
		case cBusBW:
			if f.known {
				r.BusBW, r.Known = f.v, r.Known|KnowBusBW
			}
		case cMin, cMax, cP99:
			if !f.known || f.v <= 0 {
				break
			}
			switch v := f.v * scale; c {
			case cMin:
				r.MinUS, r.Known = v, r.Known|KnowMin
			case cMax:
				r.MaxUS, r.Known = v, r.Known|KnowMax
			default:
				r.P99US, r.Known = v, r.Known|KnowP99
			}
		case cWrong:
			w, ok := parseWrong(t)
			if !ok {
				return r, false
			}
			r.Wrong = w
			if w < 0 {
				r.Check = "not checked"
			}
		case cError:
			f := parseFigure(t)
			switch {
			case !f.ok:
				return r, false
			case !f.known:
				r.Check = "not checked"
			case f.v == 0: // no element differs at all
				r.Wrong = 0
			default:
				r.Check = "max error " + t
			}
		}
	}
	return r, true
}

// inferLayout returns the layout of a row met without a header (a log
// whose start was cut), where the row's shape says it without doubt:
// nccl-tests' rows with root and #wrong (13 fields), rccl-tests' in-place
// only rows (9 fields), the error column's rows with (12) and without (11)
// a reduction, and nccom-test's (6). The time unit of the 12- and
// 11-field shapes (NCCL 1 printed milliseconds) is read from the row's
// own algbw; a row that does not tell is not read.
func inferLayout(tok []string) *layout {
	if len(tok) < 6 {
		return nil
	}
	if _, ok := parseSize(tok[0]); !ok {
		return nil
	}
	if _, ok := parseSize(tok[1]); !ok || !word.MatchString(tok[2]) {
		return nil
	}
	group := []colKind{cTime, cAlgBW, cBusBW}
	two := func(check colKind) []colKind {
		g := append(append([]colKind{}, group...), check)
		return append(g, g...)
	}
	var l *layout
	switch {
	case len(tok) == 13 && word.MatchString(tok[3]):
		l = &layout{cols: append([]colKind{cSize, cCount, cType, cRedop, cRoot}, two(cWrong)...), scale: 1}
	case len(tok) == 9 && word.MatchString(tok[3]):
		l = &layout{cols: append([]colKind{cSize, cCount, cType, cRedop, cRoot}, append(group, cWrong)...), scale: 1}
	case len(tok) == 12 && word.MatchString(tok[3]):
		l = &layout{cols: append([]colKind{cSize, cCount, cType, cRedop}, two(cError)...)}
	case len(tok) == 11 && !word.MatchString(tok[3]):
		l = &layout{cols: append([]colKind{cSize, cCount, cType}, two(cError)...)}
	case len(tok) == 6:
		l = &layout{cols: append([]colKind{cSize, cCount, cType}, group...), scale: 1, tool: NccomTest}
	default:
		return nil
	}
	l.tool = orDefault(l.tool, NCCLTests)
	n := l.groups()
	l.places = make([]bool, n)
	if n == 2 {
		l.places[1], l.placeKnown = true, true
	}
	if l.scale == 0 {
		if l.scale = timeScale(tok, len(l.cols)-8); l.scale == 0 {
			return nil
		}
	}
	return l
}

// timeScale tells the unit of the time at tok[t] from the algbw after it
// and the size at tok[0]: 1 when it is in microseconds, 1000 in
// milliseconds, 0 when the row does not tell (algbw too small to compare).
func timeScale(tok []string, t int) float64 {
	size, _ := parseSize(tok[0])
	tf, bw := parseFigure(tok[t]), parseFigure(tok[t+1])
	if !tf.known || !bw.known || tf.v <= 0 || bw.v < 0.1 {
		return 0
	}
	near := func(want float64) bool { return want > 0.9*bw.v && want < 1.1*bw.v }
	us, ms := near(float64(size)/(tf.v*1e3)), near(float64(size)/(tf.v*1e6))
	switch {
	case us && !ms:
		return 1
	case ms && !us:
		return 1000
	}
	return 0
}
