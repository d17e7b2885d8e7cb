package plot

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
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
func (l *loader) readBench(data []byte, path string) error {
	comments := readComments(data)
	r := benchfmt.NewReader(bytes.NewReader(data), path)
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
		c := comments.at(line)
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
			l.samples = append(l.samples, s)
		}
	}
	if err := r.Err(); errors.Is(err, bufio.ErrTooLong) {
		// benchfmt's message names the line before the long one.
		return fmt.Errorf("line %d: line too long: a Go benchmark line holds at most %d KiB",
			longLine(data, bufio.MaxScanTokenSize), bufio.MaxScanTokenSize>>10)
	} else if err != nil {
		return err
	}
	return nil
}

// longLine returns the number, from 1, of the first line of data that holds
// max bytes or more before its newline (a bufio.Scanner's token too long).
func longLine(data []byte, max int) int {
	n := 0
	for line := range bytes.Lines(data) {
		if n++; len(bytes.TrimSuffix(line, []byte("\n"))) >= max {
			return n
		}
	}
	return n
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

// readComments reads the comment lines of a Go benchmark file, which its
// readers skip: the link bandwidth is there, not in the configuration
// lines, so that benchstat still compares two runs that measured their
// links apart.
func readComments(data []byte) benchComments {
	var cs benchComments
	n := 0
	for line := range bytes.Lines(data) {
		n++
		text, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "#")
		if !ok {
			continue
		}
		fields := strings.Fields(text)
		switch {
		case len(fields) >= 4 && fields[0] == "hccl-test" && fields[2] == "run":
			cs = append(cs, benchComment{line: n, run: fields[3]})
		case len(fields) >= 4 && fields[0] == "link" && fields[1] == "bandwidth" && fields[3] == "GB/s":
			if v, err := strconv.ParseFloat(fields[2], 64); err == nil && v > 0 && !math.IsInf(v, 0) {
				c := cs.at(n)
				c.line, c.link = n, v
				cs = append(cs, c)
			}
		}
	}
	return cs
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
