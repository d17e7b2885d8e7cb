package predict

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// rankListing is one list of rank lines of a log (nccl-tests' and
// rccl-tests' "#  Rank  0 Group  0 Pid 4000 on node01 device  0 [..] NAME"),
// which each test prints before its table: the host of every rank, in
// rank order, and the devices they name.
type rankListing struct {
	hosts   []string
	devices []string // distinct, in order of first appearance
	line    int      // the line of its rank 0, from 1
}

// rankLine matches a rank line after whatever a launcher put before its
// '#': the rank, the host, and the device's name after its bus id.
var rankLine = regexp.MustCompile(`#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s*(?:\[[^\]]*\])?\s*(.*?)\s*$`)

// rankListings reads the rank lines of a log: a rank 0 starts a listing,
// and the ranks that follow it in order extend it. A listing whose ranks
// skip or repeat a number ends at that line.
//
// The log readers (results/peerlog) do not keep these lines; this is the
// one place that reads them, to be replaced by the readers' own list of
// hosts where they give one.
func rankListings(data []byte) []rankListing {
	var out []rankListing
	n := 0
	for line := range bytes.Lines(data) {
		n++
		m := rankLine.FindSubmatch(line)
		if m == nil {
			continue
		}
		rank, err := strconv.Atoi(string(m[1]))
		if err != nil {
			continue
		}
		host, dev := string(m[2]), strings.TrimSpace(string(m[3]))
		if rank == 0 {
			out = append(out, rankListing{line: n})
		}
		if len(out) == 0 || rank != len(out[len(out)-1].hosts) {
			continue // a rank out of order: not part of a listing
		}
		l := &out[len(out)-1]
		l.hosts = append(l.hosts, host)
		if dev != "" && !slices.Contains(l.devices, dev) {
			l.devices = append(l.devices, dev)
		}
	}
	return out
}
