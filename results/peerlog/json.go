package peerlog

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// jsonLine reads one line of rccl-tests' JSON output (-Z json): an object
// per row, such as {"numCycle":0, "name":"AllReduce", "gpus":8,
// "size":1024, "type":"float", "redop":"sum", "inPlace":0, "time":12.3,
// "algBw":0.08, "busBw":0.15, "wrong":"0"}, alone on its line (older
// versions) or in a list, one per line with a comma after it. The list's
// brackets are read and skipped; a line cut in half is not a row.
func (p *parser) jsonLine(s string) bool {
	s = strings.TrimSuffix(strings.TrimSpace(s), ",")
	if s == "[" || s == "]" || s == "[]" {
		return true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return false
	}
	size, ok := jsonInt(m["size"])
	if !ok {
		return false
	}
	r := p.base(RCCLTests)
	r.Bytes = size
	if name, ok := m["name"].(string); ok {
		r.Op = orDefault(opName(name), r.Op)
	}
	if t, ok := m["type"].(string); ok && word.MatchString(t) {
		r.DType = dtypeName(t)
	}
	if o, ok := m["redop"].(string); ok && word.MatchString(o) {
		r.RedOp = redopName(o)
	}
	// Without MPI "gpus" is every rank; with it, ranks are processes
	// of gpusPerRank ranks each.
	if g, ok := jsonInt(m["gpus"]); ok && g > 0 && g < 1<<24 {
		r.Ranks = int(g)
	} else if n, ok := jsonInt(m["ranks"]); ok && n > 0 && n < 1<<24 {
		per, ok := jsonInt(m["gpusPerRank"])
		if !ok || per < 1 || per >= 1<<24 {
			per = 1
		}
		r.Ranks = int(n * per)
	}
	if ip, ok := jsonInt(m["inPlace"]); ok {
		r.InPlace, r.Known = ip != 0, r.Known|KnowPlace
	}
	r = jsonFigures(r, m["time"], m["algBw"], m["busBw"], m["wrong"])
	if r.Known&(KnowTime|KnowAlgBW|KnowBusBW) == 0 {
		return false
	}
	return p.emit([]Row{r})
}

// jsonInt reads a JSON number (or a string of one) that is a whole,
// non-negative number.
func jsonInt(v any) (int64, bool) {
	switch v := v.(type) {
	case float64:
		if v >= 0 && v < 1<<62 && v == float64(int64(v)) {
			return int64(v), true
		}
	case string:
		return parseSize(strings.TrimSpace(v))
	}
	return 0, false
}

// jsonFigure reads a JSON number, or a string of one ("nan", "N/A").
func jsonFigure(v any) figure {
	switch v := v.(type) {
	case float64:
		return parseFigure(strconv.FormatFloat(v, 'g', -1, 64))
	case string:
		return parseFigure(strings.TrimSpace(v))
	case nil:
		return figure{ok: true}
	}
	return figure{}
}

// jsonFigures sets r's time, bandwidths and wrong elements.
func jsonFigures(r Row, t, alg, bus, wrong any) Row {
	if f := jsonFigure(t); f.known && f.v > 0 && f.v < 1e15 {
		r.TimeUS, r.Known = f.v, r.Known|KnowTime
	}
	if f := jsonFigure(alg); f.known {
		r.AlgBW, r.Known = f.v, r.Known|KnowAlgBW
	}
	if f := jsonFigure(bus); f.known {
		r.BusBW, r.Known = f.v, r.Known|KnowBusBW
	}
	r.Wrong, r.Check = -1, "not checked"
	if f := jsonFigure(wrong); f.known && f.v == float64(int64(f.v)) && f.v < 1<<62 {
		r.Wrong, r.Check = int64(f.v), ""
	}
	return r
}

// csvLine reads rccl-tests' CSV output (-Z csv): a header line
// "[numCycle,]collective,gpus|nodes,ranks,ranksPerNode,gpusPerRank,size,
// type,redop,inplace,time,algbw,busbw,#wrong" and its rows. Some versions
// name one column fewer than their rows hold (nodes): a row one field
// longer than its header is read with nodes added.
func (p *parser) csvLine(s string) bool {
	fields := strings.Split(s, ",")
	for i := range fields {
		fields[i] = strings.Trim(strings.TrimSpace(fields[i]), `"`)
	}
	if fields[0] == "collective" || fields[0] == "numCycle" {
		p.fresh()
		p.seg.tool, p.csv = RCCLTests, fields
		return true
	}
	if p.csv == nil {
		return false
	}
	cols := p.csv
	if len(fields) == len(cols)+1 && !contains(cols, "nodes") {
		i := 1
		for i < len(cols) && cols[i-1] != "collective" {
			i++
		}
		cols = append(append(append([]string{}, cols[:i]...), "nodes"), cols[i:]...)
	}
	if len(fields) != len(cols) {
		return false
	}
	m := map[string]any{}
	for i, c := range cols {
		m[strings.ToLower(c)] = fields[i]
	}
	m["name"], m["gpusPerRank"], m["inPlace"], m["algBw"], m["busBw"], m["wrong"] =
		m["collective"], m["gpusperrank"], m["inplace"], m["algbw"], m["busbw"], m["#wrong"]
	line, err := json.Marshal(m)
	return err == nil && p.jsonLine(string(line))
}

// report is nccl-tests' -J report (JSON_FILE_VERSION 3), the parts read.
type report struct {
	Config struct {
		NThreads int `json:"nthreads"`
		NGPUs    int `json:"ngpus"`
		Devices  []struct {
			Rank       *int   `json:"rank"`
			Hostname   string `json:"hostname"`
			DeviceInfo string `json:"device_info"`
		} `json:"devices"`
	} `json:"config"`
}

// oursDevice is how hccl-test's -J report describes each device: a CPU,
// and the backend that carried the run.
var oursDevice = regexp.MustCompile(`^CPU, --backend (\S+)$`)

// reportResult is one row of a -J report.
type reportResult struct {
	Size           any            `json:"size"`
	Count          any            `json:"count"`
	Type           string         `json:"type"`
	RedOp          string         `json:"redop"`
	Root           any            `json:"root"` // a padded string ("    -1") in version 3
	OutOfPlace     map[string]any `json:"out_of_place"`
	InPlace        map[string]any `json:"in_place"`
	ExperimentName string         `json:"experiment_name"`
	// ActualIterations is the timed iterations of the row (version 3).
	ActualIterations any `json:"actual_iterations"`
}

// parseReport reads nccl-tests' -J report, whole or cut short: the rows
// of its results list up to where it ends or breaks off, and what it says
// of the test (the hosts of its devices). ok is false for data that is not
// such a report. hccl-test's own report (Ours) is told apart by its
// devices.
func parseReport(data []byte) (rows []Row, seg Segment, ok bool) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return nil, seg, false
	}
	i := bytes.Index(t, []byte(`"results"`))
	if i < 0 || !bytes.Contains(t[:i], []byte(`"config"`)) && !bytes.Contains(t[:i], []byte(`"nccl_version"`)) {
		return nil, seg, false
	}
	// The part before "results" holds the config: close it to read it.
	var rep report
	head := bytes.TrimRight(bytes.TrimSpace(t[:i]), ",")
	_ = json.Unmarshal(append(append([]byte{}, head...), '}'), &rep)
	ranks, host, tool, backend := 0, "", NCCLTests, ""
	if n := len(rep.Config.Devices); n > 0 {
		ranks = max(rep.Config.NThreads, 1) * max(rep.Config.NGPUs, 1) * n
		host = rep.Config.Devices[0].Hostname
		if ranks >= 1<<24 {
			ranks = 0
		}
		if m := oursDevice.FindStringSubmatch(rep.Config.Devices[0].DeviceInfo); m != nil {
			tool, backend = Ours, m[1]
		}
		seg.Hosts = reportHosts(rep, ranks)
	}
	rest := t[i+len(`"results"`):]
	j := bytes.IndexByte(rest, '[')
	if j < 0 {
		return nil, seg, true
	}
	dec := json.NewDecoder(bytes.NewReader(rest[j:]))
	if _, err := dec.Token(); err != nil { // the list's '['
		return nil, seg, true
	}
	line := bytes.Count(t[:i], []byte("\n")) + 1
	for dec.More() {
		var res reportResult
		if dec.Decode(&res) != nil {
			break // cut short
		}
		base := Row{Tool: tool, Backend: backend, Segment: 1, Line: line, Op: opName(res.ExperimentName), Ranks: ranks, Host: host, Root: -1}
		if n, ok := jsonInt(res.ActualIterations); ok && n < 1<<30 {
			base.Iters = int(n)
		}
		size, ok := jsonInt(res.Size)
		if !ok {
			continue
		}
		base.Bytes = size
		if c, ok := jsonInt(res.Count); ok {
			base.Count, base.Known = c, base.Known|KnowCount
		}
		if word.MatchString(res.Type) {
			base.DType = dtypeName(res.Type)
		}
		if word.MatchString(res.RedOp) {
			base.RedOp = redopName(res.RedOp)
		}
		if s, ok := res.Root.(string); ok {
			if v, ok := parseRoot(strings.TrimSpace(s)); ok {
				base.Root, base.Known = v, base.Known|KnowRoot
			}
		} else if v, ok := res.Root.(float64); ok && v >= -1 && v < 1<<30 && v == float64(int(v)) {
			base.Root, base.Known = int(v), base.Known|KnowRoot
		}
		for k, place := range []map[string]any{res.OutOfPlace, res.InPlace} {
			if place == nil {
				continue
			}
			r := base
			r.InPlace, r.Known = k == 1, r.Known|KnowPlace
			t := place["time"]
			if t == nil {
				t = place["cpu_time"]
			}
			if r = jsonFigures(r, t, place["alg_bw"], place["bus_bw"], place["nwrong"]); r.Known&(KnowTime|KnowAlgBW|KnowBusBW) != 0 {
				rows = append(rows, r)
			}
		}
	}
	return rows, seg, true
}

// reportHosts returns the host of each of ranks ranks by rank, from a
// report's devices (one per process, its first rank; the process's other
// ranks on its host), nil unless they name every rank's host.
func reportHosts(rep report, ranks int) []string {
	per := max(rep.Config.NThreads, 1) * max(rep.Config.NGPUs, 1)
	if ranks < 1 || ranks > maxRankLines {
		return nil
	}
	hosts := make([]string, ranks)
	for _, d := range rep.Config.Devices {
		if d.Rank == nil || *d.Rank < 0 || *d.Rank+per > ranks || d.Hostname == "" {
			return nil
		}
		for r := *d.Rank; r < *d.Rank+per; r++ {
			hosts[r] = d.Hostname
		}
	}
	for _, h := range hosts {
		if h == "" {
			return nil
		}
	}
	return hosts
}
