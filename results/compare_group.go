package results

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/perf/benchproc"
)

// Grouping is how CompareFiles sorts measurements into tables, rows and
// columns: benchstat's -filter, -table, -row, -col and -ignore, in
// benchstat's syntax (golang.org/x/perf/benchproc/syntax), parsed and
// applied by golang.org/x/perf/benchproc as benchstat does. Each column
// after the first is compared with the first, row by row.
//
// Two things differ from benchstat, both for hccl-test's files, whose
// row names hold a row's configuration (backend, ranks, dtype, size,
// ...): Table is empty by default (benchstat's is .config), so runs on
// different hosts or with different file configuration compare without
// -ignore; and a key without a leading '/' or '.' that the rows' names
// carry (ranks, dtype, size) stands for that name key, /ranks, and the
// file key of the same name, if the rows have one, is then ignored with
// it: -ignore ranks compares a run on 8 ranks with one on 16 size by
// size, -col ranks puts them side by side. A key no row has is an error,
// where benchstat would group by an empty value.
type Grouping struct {
	// Filter says which measurements count ("*" or "" for all).
	Filter string
	// Table splits tables, besides the unit ("" for one table a unit).
	Table string
	// Row names a row (".fullname" when empty).
	Row string
	// Col names the columns compared (".file" when empty).
	Col string
	// Ignore lists keys left out of .fullname and .config.
	Ignore string
}

// DefaultGrouping is compare's grouping without flags: a row per full
// name, a column per file, one table per unit.
func DefaultGrouping() Grouping {
	return Grouping{Filter: "*", Row: ".fullname", Col: ".file"}
}

// grouper is a Grouping parsed against the files it groups.
type grouper struct {
	filter                   *benchproc.Filter
	table, row, col, residue *benchproc.Projection
	unit                     *benchproc.Field // the .unit field of table
}

// groupFlags names the fields of Grouping as the flags that set them.
var groupFlags = [...]string{"-filter", "-table", "-row", "-col", "-ignore"}

// exprs returns the expressions of g in the order of groupFlags, with
// the defaults filled in.
func (g Grouping) exprs() [5]string {
	return [5]string{cmp.Or(strings.TrimSpace(g.Filter), "*"), g.Table, cmp.Or(strings.TrimSpace(g.Row), ".fullname"),
		cmp.Or(strings.TrimSpace(g.Col), ".file"), g.Ignore}
}

// Check parses g's expressions, as benchproc does, and says what is
// wrong with the first that does not parse. It needs no files: the keys
// are checked against the files by CompareFiles.
func (g Grouping) Check() error {
	_, err := g.parse(g.exprs())
	return err
}

// parse parses the expressions ex (in the order of groupFlags).
func (g Grouping) parse(ex [5]string) (*grouper, error) {
	var gr grouper
	var err error
	if gr.filter, err = benchproc.NewFilter(ex[0]); err != nil {
		return nil, syntaxError(groupFlags[0], ex[0], err)
	}
	var p benchproc.ProjectionParser
	if gr.table, gr.unit, err = p.ParseWithUnit(ex[1], gr.filter); err != nil {
		return nil, syntaxError(groupFlags[1], ex[1], err)
	}
	for i, dst := range []**benchproc.Projection{&gr.row, &gr.col, nil} {
		proj, err := p.Parse(ex[2+i], gr.filter)
		if err != nil {
			return nil, syntaxError(groupFlags[2+i], ex[2+i], err)
		}
		if dst != nil {
			*dst = proj
		}
	}
	gr.residue = p.Residue()
	return &gr, nil
}

// syntaxError makes benchproc's error, which spans three lines (the
// message, the expression and a caret under the fault), one line naming
// the flag and the column.
func syntaxError(flag, expr string, err error) error {
	lines := strings.Split(err.Error(), "\n")
	msg := strings.TrimPrefix(lines[0], "syntax error: ")
	if len(lines) == 3 {
		col := len(strings.TrimLeft(lines[2], "\t")) // the caret, after spaces
		return fmt.Errorf("%s %q: %s at column %d", flag, expr, msg, col)
	}
	return fmt.Errorf("%s %q: %s", flag, expr, msg)
}

// keyRef is a key named in an expression: its text and where it is.
type keyRef struct {
	key        string
	off, end   int  // in the expression
	quoted     bool // written as a Go string
	projection bool
}

// scanKeys returns the keys that expr names, a filter's or a
// projection's, following benchproc's syntax: in a filter, each word
// before a ':'; in a projection, each word that starts a field. expr has
// parsed: what does not scan is left out, not refused.
func scanKeys(expr string, filter bool) []keyRef {
	var keys []keyRef
	isOp := func(c byte) bool { return strings.IndexByte("():@,", c) >= 0 }
	value := false // a filter's value comes next (after ':')
	group := false // inside a filter's key:(...) or a projection's @(...)
	order := false // a projection's order comes next (after '@')
	var prev byte  // the last operator
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || unicode.IsSpace(rune(c)):
			i++
		case isOp(c) || (c == '-' || c == '*') && !value:
			switch c {
			case ':':
				value = true
			case '(':
				group = value || prev == '@'
				value = false
			case ')':
				group = false
			case '@':
				order = true
			}
			prev = c
			i++
		case filter && (value || group) && c == '/': // a regexp, to its closing '/'
			j := i + 1
			for j < len(expr) && expr[j] != '/' {
				if expr[j] == '\\' {
					j++
				}
				j++
			}
			i, value = j+1, false
		default:
			start, quoted := i, c == '"'
			if quoted {
				i++
				for i < len(expr) && expr[i] != '"' {
					if expr[i] == '\\' {
						i++
					}
					i++
				}
				i++
			} else {
				for i < len(expr) && !isOp(expr[i]) && !unicode.IsSpace(rune(expr[i])) {
					i++
				}
			}
			i = min(i, len(expr))
			word := expr[start:i]
			isKey := false
			if filter {
				rest := strings.TrimLeftFunc(expr[i:], unicode.IsSpace)
				isKey = !value && !group && strings.HasPrefix(rest, ":")
			} else {
				isKey = !order && !group && word != "AND" && word != "OR"
			}
			value, order, prev = false, false, 0
			if !isKey {
				continue
			}
			k := keyRef{key: word, off: start, end: i, quoted: quoted, projection: !filter}
			if quoted {
				k.key = strings.Trim(word, `"`) // a key needs no escape
			}
			keys = append(keys, k)
		}
	}
	return keys
}

// fileKeys are the keys of a set of files: the name keys (without their
// '/') and the file configuration keys that some row has.
type fileKeys struct {
	name, config map[string]bool
}

// keysOf returns the keys of the rows of files.
func keysOf(files []*Samples) fileKeys {
	k := fileKeys{name: map[string]bool{}, config: map[string]bool{}}
	for _, s := range files {
		seen := map[string]bool{}
		for _, sk := range s.keys {
			if seen[sk.name] {
				continue
			}
			seen[sk.name] = true
			_, parts, _ := strings.Cut(sk.name, "/")
			for part := range strings.SplitSeq(parts, "/") {
				if key, _, ok := strings.Cut(part, "="); ok {
					k.name[key] = true
				}
			}
		}
		for _, set := range s.config.sets {
			for _, kv := range set {
				k.config[kv.Key] = true
			}
		}
	}
	return k
}

// resolve rewrites the expressions ex (in the order of groupFlags) for
// the keys of files: a bare key that the rows' names carry becomes that
// name key (see Grouping), and a key no row has is an error.
func (k fileKeys) resolve(ex [5]string) ([5]string, error) {
	var ignore []string // file keys ignored with the name keys that stand for them
	for i, expr := range ex {
		refs := scanKeys(expr, i == 0)
		var b strings.Builder
		last := 0
		for _, r := range refs {
			key := r.key
			switch {
			case strings.HasPrefix(key, "."):
				if !slices.Contains([]string{".name", ".fullname", ".file", ".config", ".unit"}, key) {
					return ex, fmt.Errorf("%s %q: unknown key %s: %s", groupFlags[i], expr, key, k.known())
				}
				continue
			case strings.HasPrefix(key, "/"):
				if !k.name[key[1:]] && key != "/gomaxprocs" {
					return ex, fmt.Errorf("%s %q: no row's name has a %s part: %s", groupFlags[i], expr, key, k.known())
				}
				continue
			case k.name[key] && (r.projection || !k.config[key]):
				// A filter on a file key that the names also carry
				// (ranks:8) reads it where it is; a projection takes
				// the name's, so that the rows' names align.
				b.WriteString(expr[last:r.off])
				b.WriteString("/" + key)
				last = r.end
				if r.projection && k.config[key] {
					ignore = append(ignore, key)
				}
			case !k.config[key]:
				return ex, fmt.Errorf("%s %q: unknown key %s: %s", groupFlags[i], expr, key, k.known())
			}
		}
		b.WriteString(expr[last:])
		ex[i] = b.String()
	}
	if len(ignore) > 0 {
		ex[4] = strings.Join(append([]string{ex[4]}, ignore...), ",")
		ex[4] = strings.TrimPrefix(ex[4], ",")
	}
	return ex, nil
}

// known lists the keys of the rows, for an error that names one they
// lack.
func (k fileKeys) known() string {
	list := func(m map[string]bool, prefix string) string {
		var s []string
		for _, key := range slices.Sorted(maps.Keys(m)) {
			s = append(s, prefix+key)
		}
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, " ")
	}
	return "the rows have the name keys " + list(k.name, "/") + ", the file keys " + list(k.config, "") +
		", and .name .fullname .file .unit .config"
}

// NameKeysApart returns the name keys (as "/ranks") that keep the rows a
// apart from the rows b: those whose parts, left out of every name, make
// some name of a one of b. It is empty when no single key does.
func NameKeysApart(a, b []string) []string {
	keys := map[string]bool{}
	for _, n := range slices.Concat(a, b) {
		_, parts, _ := strings.Cut(n, "/")
		for part := range strings.SplitSeq(parts, "/") {
			if k, _, ok := strings.Cut(part, "="); ok {
				keys[k] = true
			}
		}
	}
	without := func(name, key string) string {
		base, parts, _ := strings.Cut(name, "/")
		var kept []string
		for part := range strings.SplitSeq(parts, "/") {
			if !strings.HasPrefix(part, key+"=") {
				kept = append(kept, part)
			}
		}
		return strings.Join(append([]string{base}, kept...), "/")
	}
	var apart []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		inB := make(map[string]bool, len(b))
		for _, n := range b {
			inB[without(n, k)] = true
		}
		if slices.ContainsFunc(a, func(n string) bool { return inB[without(n, k)] }) {
			apart = append(apart, "/"+k)
		}
	}
	return apart
}
