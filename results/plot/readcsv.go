package plot

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hccl-test/hccl-test/results"
)

// readCSV reads the rows of a CSV file. Columns are found by name, so a file
// with columns added or reordered reads the same; a header row repeated
// further down (files concatenated with cat) is read as a header again.
func (l *loader) readCSV(in io.Reader) error {
	r := csv.NewReader(in)
	r.FieldsPerRecord = -1
	r.Comment = '#'
	r.ReuseRecord = true
	var col map[string]int
	for {
		row, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(row) > 0 {
			row[0] = strings.TrimPrefix(row[0], "\ufeff") // a byte-order mark: files concatenated
		}
		if slices.Contains(row, "schema_version") {
			col = map[string]int{}
			for i, name := range row {
				col[name] = i
			}
			var missing []string
			for _, need := range []string{"op", "size_bytes", "time_us", "busbw_GBps"} {
				if _, ok := col[need]; !ok {
					missing = append(missing, need)
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("the CSV header has no %s column%s", strings.Join(missing, ", "), map[bool]string{true: "s"}[len(missing) > 1])
			}
			continue
		}
		if col == nil {
			return errors.New("CSV has no header row")
		}
		field := func(name string) string {
			if i, ok := col[name]; ok && i < len(row) {
				return row[i]
			}
			return ""
		}
		pos, _ := r.FieldPos(0)
		s, link, err := csvSample(field)
		if err != nil {
			return fmt.Errorf("CSV line %d: %w", pos, err)
		}
		if s.bytes > 0 {
			l.add(s)
		}
		if link > 0 {
			l.links = append(l.links, link)
		}
	}
}

// csvSample makes a sample of one CSV row, and returns the row's link
// bandwidth, 0 when not given.
func csvSample(field func(string) string) (sample, float64, error) {
	s := sample{key: Key{
		Run: field("run_id"), Op: field("op"), DType: field("dtype"), RedOp: field("redop"),
		Backend: field("backend"), Group: field("group"), Algo: field("algo_requested"),
		InPlace: field("in_place") == "true",
	}}
	if s.key.Algo == "" { // a file without algo_requested
		s.key.Algo = field("algo")
	}
	for _, n := range []struct {
		name string
		v    *int
	}{{"ranks", &s.key.Ranks}, {"buckets", &s.key.Buckets}} {
		if f := field(n.name); f != "" {
			v, err := strconv.Atoi(f)
			if err != nil {
				return s, 0, fmt.Errorf("%s: %w", n.name, err)
			}
			*n.v = v
		}
	}
	if s.key.Buckets == 1 {
		s.key.Buckets = 0
	}
	if root := field("root"); root != "" && root != "-1" {
		if _, err := strconv.Atoi(root); err != nil {
			return s, 0, fmt.Errorf("root: %w", err)
		}
		s.key.Root = root
	}
	var err error
	if s.bytes, err = strconv.ParseInt(field("size_bytes"), 10, 64); err != nil {
		return s, 0, fmt.Errorf("size_bytes: %w", err)
	}
	if s.timeUS, err = optMeasurement(field("time_us"), 1e-6, "sec/op"); err != nil {
		return s, 0, fmt.Errorf("time_us %w", err)
	}
	if s.busBW, err = optMeasurement(field("busbw_GBps"), 1, "busbw-GB/s"); err != nil {
		return s, 0, fmt.Errorf("busbw_GBps %w", err)
	}
	link, err := optFloat(field("link_GBps"))
	if err != nil {
		return s, 0, fmt.Errorf("link_GBps: %w", err)
	}
	if math.IsNaN(link) {
		link = 0
	}
	return s, link, nil
}

// optMeasurement parses a CSV measurement: an empty field is unknown (NaN);
// any other must be a number that, times scale, results.CheckMeasurement
// accepts in unit. A plot that left out the rows it could not place would
// show less than the file holds without a word.
func optMeasurement(f string, scale float64, unit string) (float64, error) {
	if f == "" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: not a number", f)
	}
	if why := results.CheckMeasurement(v*scale, unit); why != "" {
		return 0, fmt.Errorf("%s: %s", f, why)
	}
	return v, nil
}

// optFloat parses a CSV number; an empty field, NaN or an infinity is
// unknown (NaN).
func optFloat(f string) (float64, error) {
	if f == "" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(f, 64)
	if math.IsInf(v, 0) {
		v = math.NaN()
	}
	return v, err
}
