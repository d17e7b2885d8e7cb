package predict

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/world"
)

// Sample is one measured row that fit uses: a collective of Bytes (as the
// tool defines the size: nccl-tests', which is ours) on World, which took
// TimeUS.
type Sample struct {
	File  string // the file it came from
	Where string // where in the file: "#3 line 17", "row 12"
	Op    coll.Op
	World clustermodel.World
	Bytes int64
	// TimeUS is the measured time of one call, in microseconds.
	TimeUS float64
	// Algo is the algorithm of ours that ran (hccl-test's own rows), ""
	// when another tool measured it: fit then takes the fastest of ours.
	Algo string
}

// BusBW is the row's bus bandwidth in GB/s.
func (s Sample) BusBW() float64 {
	return float64(s.Bytes) / (s.TimeUS * 1e3) * s.Op.BusFactor(s.World.Ranks())
}

// Cluster says which cluster a file's rows are of: the tool (and for
// hccl-test's own rows the backend) and the devices its rank lines name.
// Files of one fit must agree.
type Cluster struct {
	Source string
	Device string
}

// String describes c.
func (c Cluster) String() string {
	if c.Device == "" {
		return c.Source
	}
	return c.Source + " on " + c.Device
}

// File is what one input gave: its rows and its cluster.
type File struct {
	Path    string
	Cluster Cluster
	Samples []Sample
	// Skipped counts rows that fit cannot use: no time, one rank, or a
	// collective it does not know.
	Skipped int
}

// Stats are the figures of a row's time that fit can take (--stat): the
// mean of its iterations (time_us, what every tool's log gives), the
// median iteration (p50_us) or the fastest (min_us), the last two of
// hccl-test's CSV only.
var Stats = []string{"mean", "p50", "min"}

// statColumns are the CSV columns of Stats.
var statColumns = map[string]string{"mean": "time_us", "p50": "p50_us", "min": "min_us"}

// ReadFile reads the rows of one input: another tool's log (any that
// convert reads), hccl-test's CSV or its Go benchmark lines. topo is the --topology given for the
// file, "" for none: a log with rank lines must agree with it, one without
// needs it where it has more than one rank. stat is one of Stats ("" for
// mean). Every error names the path.
func ReadFile(path, topo, stat string) (*File, error) {
	if stat == "" {
		stat = "mean"
	}
	if statColumns[stat] == "" {
		return nil, fmt.Errorf("--stat %q: want %s", stat, strings.Join(Stats, ", "))
	}
	if err := clustermodel.Regular(path); err != nil {
		return nil, err
	}
	in, err := results.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	switch in.Format {
	case results.FormatCSV:
		return readCSV(in, path, topo, statColumns[stat])
	case results.FormatLog:
		if stat != "mean" {
			return nil, fmt.Errorf("%s: another tool's log gives the mean time of a row only: fit it with --stat mean", path)
		}
		data, err := in.ReadAll()
		if err != nil {
			return nil, err
		}
		return readLog(path, data, topo)
	case results.FormatBench:
		if stat != "mean" {
			return nil, fmt.Errorf("%s: Go benchmark lines give the mean time of a row only: fit them with --stat mean", path)
		}
		return readBench(in, path, topo)
	}
	return nil, fmt.Errorf("%s: JSON lines: fit reads hccl-test's CSV or Go benchmark lines, or another tool's log", path)
}

// readLog reads another tool's log, its topology from its rank lines or
// topo.
func readLog(path string, data []byte, topo string) (*File, error) {
	runs, _ := results.LogRuns(path, data)
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no rows of nccl-tests, rccl-tests, hccl_test or nccom-test output", path)
	}
	listings := rankListings(data)
	f := &File{Path: path, Cluster: Cluster{Source: runs[0].Header.Source}}
	for _, l := range listings {
		if len(l.devices) > 1 {
			return nil, fmt.Errorf("%s:%d: two clusters mixed: ranks on %s and on %s", path, l.line, l.devices[0], l.devices[1])
		}
		if len(l.devices) == 1 {
			if f.Cluster.Device != "" && f.Cluster.Device != l.devices[0] {
				return nil, fmt.Errorf("%s:%d: two clusters mixed: ranks on %s here, on %s before", path, l.line, l.devices[0], f.Cluster.Device)
			}
			f.Cluster.Device = l.devices[0]
		}
	}
	for i, run := range runs {
		if run.Header.Source != f.Cluster.Source {
			return nil, fmt.Errorf("%s: two clusters mixed: rows of %s and of %s", path, f.Cluster.Source, run.Header.Source)
		}
		world, err := logWorld(path, i, len(runs), run.Header.Ranks, listings, topo)
		if err != nil {
			return nil, err
		}
		for j, r := range run.Records {
			f.add(Sample{File: path, Where: fmt.Sprintf("%s row %d", run.Header.RunID, j+1), World: world,
				Bytes: r.Bytes, TimeUS: r.TimeUS}, r.Op, "")
		}
	}
	return f, nil
}

// logWorld returns the world of test i of n of a log of ranks ranks (0
// when the log does not say): from its rank listing (the i-th, or the one
// listing of a log that has one), checked against topo when that is given,
// or from topo alone.
func logWorld(path string, i, n, ranks int, listings []rankListing, topo string) (clustermodel.World, error) {
	var l *rankListing
	switch {
	case len(listings) == n:
		l = &listings[i]
	case len(listings) == 1:
		l = &listings[0]
	case len(listings) > 1:
		return clustermodel.World{}, fmt.Errorf("%s: %d tests but %d listings of ranks: give each test's log as a file of its own", path, n, len(listings))
	}
	if l != nil && ranks > 0 && len(l.hosts) != ranks {
		return clustermodel.World{}, fmt.Errorf("%s:%d: %d ranks listed for a test of %d ranks", path, l.line, len(l.hosts), ranks)
	}
	var fromHosts *clustermodel.World
	if l != nil {
		t, err := world.TopologyFromHosts(l.hosts)
		if err != nil {
			return clustermodel.World{}, fmt.Errorf("%s:%d: the rank lines: %s", path, l.line, strings.TrimPrefix(err.Error(), "--topology auto: "))
		}
		w := worldOf(t, len(l.hosts))
		fromHosts = &w
		ranks = len(l.hosts)
	}
	if topo == "" {
		if fromHosts == nil {
			return clustermodel.World{}, fmt.Errorf("%s: no rank lines say which host each rank is on: give --topology %s=servers=S,per-server=G", path, path)
		}
		return *fromHosts, nil
	}
	given, err := parseWorld(topo, ranks)
	if err != nil {
		return clustermodel.World{}, fmt.Errorf("%s: %w", path, err)
	}
	if fromHosts != nil && given != *fromHosts {
		return clustermodel.World{}, fmt.Errorf("%s:%d: --topology servers=%d,per-server=%d contradicts the rank lines, which put %d ranks on each of %d hosts",
			path, l.line, given.Servers, given.PerServer, fromHosts.PerServer, fromHosts.Servers)
	}
	return given, nil
}

// worldOf is the world of topology t over n ranks (one server when t has
// one level).
func worldOf(t world.Topology, n int) clustermodel.World {
	if t.Servers <= 1 {
		return clustermodel.World{Servers: 1, PerServer: n}
	}
	return clustermodel.World{Servers: t.Servers, PerServer: t.PerServer}
}

// parseWorld reads "servers=S,per-server=G" into a world of ranks ranks
// (either key alone, when ranks is known; both when it is 0).
func parseWorld(s string, ranks int) (clustermodel.World, error) {
	if ranks <= 0 {
		var w clustermodel.World
		for _, kv := range strings.Split(s, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			n, err := limits.Count(v)
			switch {
			case err != nil || n < 1:
				return w, fmt.Errorf("--topology %q: %q is not servers=S or per-server=G with a positive number", s, kv)
			case strings.EqualFold(k, "servers"):
				w.Servers = n
			case strings.EqualFold(k, "per-server"):
				w.PerServer = n
			default:
				return w, fmt.Errorf("--topology %q: unknown key %q (want servers and per-server)", s, k)
			}
		}
		if w.Servers == 0 || w.PerServer == 0 {
			return w, fmt.Errorf("--topology %q: the log does not say its ranks: give both servers=S and per-server=G", s)
		}
		return w, checkWorld(w)
	}
	t, err := world.ParseTopology(s, ranks)
	if err != nil {
		return clustermodel.World{}, err
	}
	return worldOf(t, ranks), nil
}

// checkWorld refuses a world of fewer than 2 or more than MaxRanks ranks.
func checkWorld(w clustermodel.World) error {
	if w.Servers < 1 || w.PerServer < 1 || w.Servers > clustermodel.MaxRanks || w.PerServer > clustermodel.MaxRanks ||
		w.Ranks() > clustermodel.MaxRanks {
		return fmt.Errorf("%d servers x %d ranks: the limit is %d ranks in all", w.Servers, w.PerServer, clustermodel.MaxRanks)
	}
	if w.Ranks() < 2 {
		return errors.New("one rank: nothing moves between ranks")
	}
	return nil
}

// add appends s, for collective op (as the row names it) and algorithm
// algo, or counts it skipped.
func (f *File) add(s Sample, op, algo string) {
	o, err := coll.ParseOp(op)
	if err != nil || s.World.Ranks() < 2 || !(s.TimeUS > 0) || math.IsInf(s.TimeUS, 0) || s.Bytes < 1 {
		f.Skipped++
		return
	}
	s.Op = o
	if name, ok := strings.CutPrefix(algo, coll.Auto+":"); ok {
		algo = name
	}
	if algo != "" && !coll.Supports(o, algo) || algo == coll.Auto || algo == coll.Native {
		algo = ""
	}
	s.Algo = algo
	f.Samples = append(f.Samples, s)
}

// readCSV reads hccl-test's CSV: the columns op, ranks, size_bytes,
// timeColumn, algo, backend, source and topology, by name.
func readCSV(r io.Reader, path, topo, timeColumn string) (*File, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	var col map[string]int
	f := &File{Path: path}
	for n := 1; ; n++ {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		if len(row) > 0 && row[0] == "schema_version" {
			col = map[string]int{}
			for i, name := range row {
				col[name] = i
			}
			for _, need := range []string{"op", "ranks", "size_bytes", timeColumn} {
				if _, ok := col[need]; !ok {
					return nil, fmt.Errorf("%s:%d: the CSV header has no %s column", path, line, need)
				}
			}
			continue
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(row) {
				return row[i]
			}
			return ""
		}
		if col == nil {
			return nil, fmt.Errorf("%s:%d: a row before the CSV header", path, line)
		}
		cl := Cluster{Source: get("source")}
		if cl.Source == "" || cl.Source == results.SourceOurs {
			cl.Source = strings.TrimSpace(results.SourceOurs + " " + get("backend"))
		}
		switch {
		case f.Cluster == Cluster{}:
			f.Cluster = cl
		case f.Cluster != cl:
			return nil, fmt.Errorf("%s:%d: two clusters mixed: rows of %s and of %s", path, line, f.Cluster, cl)
		}
		ranks, err1 := strconv.Atoi(get("ranks"))
		bytes, err2 := strconv.ParseInt(get("size_bytes"), 10, 64)
		t, err3 := strconv.ParseFloat(get(timeColumn), 64)
		if err := errors.Join(err1, err2, err3); err != nil || ranks < 1 || ranks > clustermodel.MaxRanks || math.IsNaN(t) {
			return nil, fmt.Errorf("%s:%d: a row without a number of ranks (up to %d), a size and a time", path, line, clustermodel.MaxRanks)
		}
		world, err := csvWorld(get("topology"), topo, ranks)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		f.add(Sample{File: path, Where: fmt.Sprintf("line %d", line), World: world, Bytes: bytes, TimeUS: t}, get("op"), get("algo"))
	}
	if col == nil {
		return nil, fmt.Errorf("%s: no CSV header", path)
	}
	return f, nil
}

// csvWorld is the world of a CSV row of ranks ranks whose topology column
// reads column ("S servers x G ranks ...", "" for one level), given topo
// (--topology for the file, "" for none): a column that names servers
// must agree with topo; an empty one takes it.
func csvWorld(column, topo string, ranks int) (clustermodel.World, error) {
	var fromCol *clustermodel.World
	if column != "" {
		var w clustermodel.World
		if _, err := fmt.Sscanf(column, "%d servers x %d ranks", &w.Servers, &w.PerServer); err != nil || w.Ranks() != ranks {
			return clustermodel.World{}, fmt.Errorf("topology %q: not S servers x G ranks of the row's %d ranks", column, ranks)
		}
		fromCol = &w
	}
	if topo == "" {
		if fromCol != nil {
			return *fromCol, nil
		}
		return clustermodel.World{Servers: 1, PerServer: ranks}, nil
	}
	w, err := parseWorld(topo, ranks)
	if err != nil {
		return w, err
	}
	if fromCol != nil && *fromCol != w {
		return w, fmt.Errorf("--topology servers=%d,per-server=%d contradicts the run's topology column (%s)", w.Servers, w.PerServer, column)
	}
	return w, nil
}
