package predict

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/results"
)

// readBench reads hccl-test's Go benchmark format (--bench): each line's
// collective from its name, ranks and size from its name's parts, the
// backend from its configuration, the time from ns/op (the row's mean,
// which the reader gives as sec/op).
// The format names no topology: a run is one server unless topo says.
func readBench(r io.Reader, path, topo string) (*File, error) {
	f := &File{Path: path}
	br := benchfmt.NewReader(r, path)
	for br.Scan() {
		res, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue // unit metadata, or a line that did not parse
		}
		_, line := res.Pos()
		base, parts := res.Name.Parts()
		var ranks int
		var size int64 = -1
		for _, p := range parts {
			k, v, _ := strings.Cut(strings.TrimPrefix(string(p), "/"), "=")
			switch k {
			case "ranks":
				ranks, _ = strconv.Atoi(v)
			case "size":
				if n, err := limits.Size(strings.TrimSuffix(v, "B")); err == nil {
					size = n
				} else if n, err := limits.Size(v); err == nil {
					size = n
				}
			}
		}
		where := fmt.Sprintf("line %d", line)
		if ranks < 1 || ranks > clustermodel.MaxRanks || size < 0 {
			return nil, fmt.Errorf("%s:%d: a result without ranks=N (up to %d) and size= in its name", path, line, clustermodel.MaxRanks)
		}
		cl := Cluster{Source: strings.TrimSpace(results.SourceOurs + " " + res.GetConfig("backend"))}
		if src := res.GetConfig("source"); src != "" {
			cl.Source = src
		}
		switch {
		case f.Cluster == Cluster{}:
			f.Cluster = cl
		case f.Cluster != cl:
			return nil, fmt.Errorf("%s:%d: two clusters mixed: results of %s and of %s", path, line, f.Cluster, cl)
		}
		world, err := csvWorld("", topo, ranks)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		us := -1.0
		if sec, ok := res.Value("sec/op"); ok { // the reader tidies ns/op to sec/op
			us = sec * 1e6
		}
		f.add(Sample{File: path, Where: where, World: world, Bytes: size, TimeUS: us}, string(bytes.ToLower(base)), "")
	}
	if err := br.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Samples)+f.Skipped == 0 {
		return nil, fmt.Errorf("%s: neither another tool's log, hccl-test's CSV nor Go benchmark lines of hccl-test", path)
	}
	return f, nil
}
