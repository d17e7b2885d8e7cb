package results

import (
	"bytes"
	"encoding/json"
	"io"
)

// JSONLines writes one JSON object per record, one per line (JSON Lines),
// each written and flushed as soon as the record arrives. An object has the
// same fields, with the same names and in the same order, as a CSV row:
// numbers are JSON numbers, in_place a boolean, and an unknown value
// (utilization without a link bandwidth, wrong elements of an unchecked
// row, any NaN) is null. There is no header line: every object carries
// schema_version and the run's metadata. JSONLines is not safe for
// concurrent use.
type JSONLines struct {
	w   io.Writer
	run runInfo
	buf bytes.Buffer // one line, reused
	err error        // first error; later calls return it
}

// NewJSONLines returns a JSONLines writing to w. If w has a Flush method (a
// *bufio.Writer) it is called after every line.
func NewJSONLines(w io.Writer) *JSONLines { return &JSONLines{w: w} }

// Begin implements Sink. It writes nothing.
func (j *JSONLines) Begin(h Header) error {
	j.run = newRunInfo(h)
	return j.err
}

// Write implements Sink: it writes and flushes one line.
func (j *JSONLines) Write(r Record) error {
	if j.err != nil {
		return j.err
	}
	// Built by hand rather than from a map so that the fields keep the
	// CSV's column order.
	j.buf.Reset()
	j.buf.WriteByte('{')
	for i, v := range fieldValues(j.run, r) {
		if i > 0 {
			j.buf.WriteByte(',')
		}
		if err := appendJSON(&j.buf, columns[i].name); err != nil {
			j.err = err
			return err
		}
		j.buf.WriteByte(':')
		if err := appendJSON(&j.buf, v); err != nil {
			j.err = err
			return err
		}
	}
	j.buf.WriteString("}\n")
	if _, j.err = j.w.Write(j.buf.Bytes()); j.err == nil {
		j.err = flushTo(j.w)
	}
	return j.err
}

// End implements Sink. It writes nothing.
func (j *JSONLines) End(Summary) error { return j.err }

func appendJSON(buf *bytes.Buffer, v any) error {
	b, err := json.Marshal(v) // never fails: fieldValues has no NaN or Inf
	if err != nil {
		return err
	}
	buf.Write(b)
	return nil
}
