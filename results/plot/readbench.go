package plot

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/hccl-test/hccl-test/results"
)

// readBench reads the results of a Go benchmark file. A name such as
// AllReduce/backend=shm/ranks=8/dtype=fp16/redop=sum/size=1MiB gives the
// key and size; the file configuration gives the requested algorithm, or
// for a run of several the name's own "/algo=ring".
// Lines that are not results (other output mixed in) are skipped, as
// benchstat skips them.
func (l *loader) readBench(in io.Reader, path string) error {
	comments := &commentReader{r: in}
	r := benchfmt.NewReader(comments, path)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		base, parts := res.Name.Parts()
		s := sample{
			key:    Key{Op: strings.ToLower(string(base)), Algo: res.GetConfig("algo"), RedOp: "none"},
			timeUS: math.NaN(), busBW: math.NaN(),
		}
		_, line := res.Pos()
		c := comments.cs.at(line)
		s.key.Run = c.run
		if c.link > 0 && c.line > l.linkLine {
			l.links, l.linkLine = append(l.links, c.link), c.line
		}
		hasSize := false
		for _, p := range parts {
			k, v, _ := strings.Cut(strings.TrimPrefix(string(p), "/"), "=")
			var err error
			switch k {
			case "backend":
				s.key.Backend = v
			case "ranks":
				s.key.Ranks, err = strconv.Atoi(v)
			case "dtype":
				s.key.DType = v
			case "redop":
				s.key.RedOp = v
			case "inplace":
				s.key.InPlace = v == "true"
			case "root":
				s.key.Root = v
				_, err = strconv.Atoi(v)
			case "group":
				s.key.Group = v
			case "buckets":
				if s.key.Buckets, err = strconv.Atoi(v); s.key.Buckets == 1 {
					s.key.Buckets = 0
				}
			case "size":
				s.bytes, err = parseBinarySize(v)
				hasSize = true
			case "algo": // a run of several algorithms names each row's
				s.key.Algo = v
			}
			if err != nil {
				return fmt.Errorf("line %d: %s: %w", line, k, err)
			}
		}
		if !hasSize {
			continue // not an hccl-test result
		}
		for _, v := range res.Values {
			// The reader tidies ns/op to sec/op, but for 0 ns/op.
			val, unit := benchunit.Tidy(v.Value, v.Unit)
			if unit != "sec/op" && unit != "busbw-GB/s" {
				continue
			}
			why := results.CheckMeasurement(val, unit)
			if unit == "sec/op" && why == "" && math.IsInf(val*1e6, 0) {
				why = "too large a time"
			}
			if why != "" {
				if v.OrigUnit != "" { // as the file gives it
					v.Value, v.Unit = v.OrigValue, v.OrigUnit
				}
				return fmt.Errorf("line %d: %v %s: %s", line, v.Value, v.Unit, why)
			}
			if unit == "sec/op" {
				s.timeUS = val * 1e6
			} else {
				s.busBW = val
			}
		}
		if s.bytes > 0 {
			l.add(s)
		}
	}
	if err := r.Err(); errors.Is(err, bufio.ErrTooLong) {
		// benchfmt's message names the line before the long one; the
		// comment reader has read up to it.
		return fmt.Errorf("line %d: line too long: a Go benchmark line holds at most %d KiB",
			comments.longLine, bufio.MaxScanTokenSize>>10)
	} else if err != nil {
		return err
	}
	return nil
}

// parseBinarySize parses a size as results.FormatBinarySize writes it:
// "1000B", "1KiB", "1.5MiB", "3GiB", "2TiB".
func parseBinarySize(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}} {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		v = math.Round(v * float64(int64(1)<<u.shift))
		if err != nil || !(v >= 0 && v < math.MaxInt64) {
			return 0, fmt.Errorf("bad size %q", s)
		}
		return int64(v), nil
	}
	return 0, fmt.Errorf("bad size %q: want a unit B, KiB, MiB, GiB or TiB", s)
}

// benchComment is what a Go benchmark file's comment lines say about the
// results that follow them, as results.BenchFmt writes them:
// "# hccl-test VERSION  run ID" and "# link bandwidth 12.5 GB/s (source)".
type benchComment struct {
	line int     // of the comment, from 1; 0 for none
	run  string  // run id, "" when not said
	link float64 // link bandwidth in GB/s, 0 when not said
}

// benchComments are a file's comments, in line order.
type benchComments []benchComment

// commentReader passes a Go benchmark file on to its parser and reads its
// comment lines on the way, which the parser skips: the link bandwidth is
// there, not in the configuration lines, so that benchstat still compares
// two runs that measured their links apart. It reads ahead of the parser,
// and keeps the comments it may still ask for.
type commentReader struct {
	r        io.Reader
	cs       benchComments
	line     int    // lines ended so far
	cur      []byte // the line being read, while it may be a comment
	skip     bool   // the line being read is no comment, or too long for one
	longLine int    // the first line of bufio.MaxScanTokenSize bytes or more, from 1
	width    int    // bytes of the line being read
}

// maxComment is the longest comment line read for what it says.
const maxComment = 4 << 10

func (c *commentReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			c.line++
			if !c.skip {
				c.comment(string(c.cur), c.line)
			}
			c.cur, c.skip, c.width = c.cur[:0], false, 0
			continue
		}
		if c.width++; c.width >= bufio.MaxScanTokenSize && c.longLine == 0 {
			c.longLine = c.line + 1
		}
		if c.skip {
			continue
		}
		if len(c.cur) >= maxComment || (len(bytes.TrimSpace(c.cur)) == 0 && b != '#' && b != ' ' && b != '\t' && b != '\r') {
			c.skip = true
			continue
		}
		c.cur = append(c.cur, b)
	}
	if err == io.EOF && !c.skip && len(c.cur) > 0 {
		c.comment(string(c.cur), c.line+1)
		c.cur = c.cur[:0]
	}
	return n, err
}

// comment reads line n, if it is a comment that says something.
func (c *commentReader) comment(line string, n int) {
	text, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
	if !ok {
		return
	}
	fields := strings.Fields(text)
	switch {
	case len(fields) >= 4 && fields[0] == "hccl-test" && fields[2] == "run":
		c.cs = append(c.cs, benchComment{line: n, run: fields[3]})
	case len(fields) >= 4 && fields[0] == "link" && fields[1] == "bandwidth" && fields[3] == "GB/s":
		if v, err := strconv.ParseFloat(fields[2], 64); err == nil && v > 0 && !math.IsInf(v, 0) {
			bc := c.cs.at(n)
			bc.line, bc.link = n, v
			c.cs = append(c.cs, bc)
		}
	}
}

// at returns what the comments before line say: the last run id and the
// link bandwidth said after it.
func (cs benchComments) at(line int) benchComment {
	i, _ := slices.BinarySearchFunc(cs, line, func(c benchComment, l int) int { return cmp.Compare(c.line, l) })
	if i == 0 {
		return benchComment{}
	}
	return cs[i-1]
}
