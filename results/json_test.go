package results

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// jsonStrings are the columns whose JSON values are strings; in_place is a
// boolean and every other column a number.
var jsonStrings = []string{"run_id", "started", "host", "tool_version", "backend",
	"algo_requested", "placement_mode", "link_source", "op", "dtype", "redop", "algo", "group", "topology", "cache", "source", "check_note", "average"}

// jsonWant turns an expected CSV field into the value encoding/json decodes
// from the expected JSON: null for an unknown (empty) number.
func jsonWant(t *testing.T, col, field string) any {
	switch {
	case slices.Contains(jsonStrings, col):
		return field
	case col == "in_place", col == "faster_than_link":
		return field == "true"
	case field == "":
		return nil
	}
	f, err := strconv.ParseFloat(field, 64)
	if err != nil {
		t.Fatalf("bad expectation %s=%q", col, field)
	}
	return f
}

func TestJSONLines(t *testing.T) {
	var buf bytes.Buffer
	writeAll(t, NewJSONLines(&buf), fmtHeader(), caseRecords())
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	cases := fmtCases()
	if len(lines) != len(cases) {
		t.Fatalf("%d lines, want one per record:\n%s", len(lines), buf.String())
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got map[string]any
			if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
				t.Fatalf("line does not decode: %v\n%s", err, lines[i])
			}
			if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, slices.Sorted(slices.Values(wantColumns))) {
				t.Errorf("fields %q, want the CSV columns %q", keys, wantColumns)
			}
			fields := append(slices.Clone(fmtRun), c.want...)
			for j, col := range wantColumns {
				want := jsonWant(t, col, fields[j])
				g, gok := got[col].(float64)
				w, wok := want.(float64)
				if gok && wok {
					if math.Abs(g-w) > 1e-12*math.Max(1, math.Abs(w)) {
						t.Errorf("%s = %v, want %v", col, g, w)
					}
				} else if got[col] != want {
					t.Errorf("%s = %#v, want %#v", col, got[col], want)
				}
			}
		})
	}
	// The fields come in the CSV's column order, for people reading the file.
	if i, j := strings.Index(lines[0], `"schema_version"`), strings.Index(lines[0], `"wrong"`); i != 1 || j < i {
		t.Errorf("fields out of column order: %s", lines[0])
	}
}
