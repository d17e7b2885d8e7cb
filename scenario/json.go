package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// scenDuplicateKey finds the first key given twice in one object of data,
// which encoding/json would take silently (the later value wins). Keys
// compare as encoding/json matches them to fields, regardless of case. It
// leaves malformed JSON to the decoder's own error and returns nil.
func scenDuplicateKey(data []byte) error {
	type object struct {
		lines   map[string]int // line of each key so far, by folded name
		wantKey bool           // the next token is a key, or the object's end
	}
	var stack []*object // innermost last; nil for an array
	dec := json.NewDecoder(bytes.NewReader(data))
	valueDone := func() { // a value ended: its object wants a key again
		if n := len(stack); n > 0 && stack[n-1] != nil {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or an error that decoding reports better
		}
		top := (*object)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if key, ok := tok.(string); ok && top != nil && top.wantKey {
			line, _ := scenPosition(data, dec.InputOffset())
			folded := strings.ToLower(key)
			if first, dup := top.lines[folded]; dup {
				return fmt.Errorf("line %d: key %q is given twice in one object (first on line %d)", line, key, first)
			}
			top.lines[folded], top.wantKey = line, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &object{lines: map[string]int{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, nil)
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// scenWholeNumber says why the JSON number lit does not fit a field that
// takes a whole number.
func scenWholeNumber(lit string) string {
	f, err := strconv.ParseFloat(lit, 64)
	switch {
	case err != nil || f != math.Trunc(f):
		return fmt.Sprintf("want a whole number, got %s", lit)
	case math.Abs(f) >= math.MaxInt64:
		return fmt.Sprintf("got %s, too large for a whole number", lit)
	}
	return fmt.Sprintf("want a whole number written in digits, such as %d, got %s", int64(f), lit)
}
