package results

import (
	"bytes"

	"golang.org/x/perf/benchfmt"
)

// rowConfigs are the file configurations ("key: value" lines) of a file's
// rows, by row name, each distinct configuration held once: a file of
// 120,000 rows of one run holds one.
type rowConfigs struct {
	byName map[string]int32    // index in sets
	sets   [][]benchfmt.Config // distinct, file keys only
	index  map[string]int32    // index in sets by canonical form
	buf    []byte              // a canonical form being made
}

// set records cfg, of which only the file keys count, as the
// configuration of row name, unless the row has one already: a row is
// configured as of its first measurement.
func (c *rowConfigs) set(name string, cfg []benchfmt.Config) {
	if _, ok := c.byName[name]; ok {
		return
	}
	if c.byName == nil {
		c.byName, c.index = map[string]int32{}, map[string]int32{}
	}
	c.buf = c.buf[:0]
	for _, kv := range cfg {
		if kv.File {
			c.buf = append(append(append(append(c.buf, kv.Key...), 0), kv.Value...), 0)
		}
	}
	i, ok := c.index[string(c.buf)]
	if !ok {
		var kept []benchfmt.Config
		for _, kv := range cfg {
			if kv.File { // the reader reuses its values: copies
				kept = append(kept, benchfmt.Config{Key: kv.Key, Value: bytes.Clone(kv.Value), File: true})
			}
		}
		i = int32(len(c.sets))
		c.sets = append(c.sets, kept)
		c.index[string(c.buf)] = i
	}
	c.byName[name] = i
}

// Rows returns how many rows s measures, each in each of its units.
func (s *Samples) Rows() int { return len(s.keys) }
