package isolate

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// rankLine is nccl-tests' and rccl-tests' line naming the host of a rank,
// "#  Rank  3 Group  0 Pid 1234 on node07 device  3 [...]", after any
// launcher prefix (Open MPI's [1,0]<stdout>:, srun -l's "0: ").
var rankLine = regexp.MustCompile(`#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\b`)

// RankHosts returns the hosts that a log's rank lines name, each once, in
// the order of their lowest rank; nil when the log has no rank line.
// (results/peerlog keeps only rank 0's host.)
func RankHosts(data []byte) []string {
	lowest := map[string]int{}
	for line := range bytes.Lines(data) {
		m := rankLine.FindSubmatch(line)
		if m == nil {
			continue
		}
		rank, err := strconv.Atoi(string(m[1]))
		if err != nil {
			continue
		}
		host := string(m[2])
		if r, ok := lowest[host]; !ok || rank < r {
			lowest[host] = rank
		}
	}
	hosts := make([]string, 0, len(lowest))
	for h := range lowest {
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b string) int { return lowest[a] - lowest[b] })
	if len(hosts) == 0 {
		return nil
	}
	return hosts
}

// nameSeparators split a file name's stem into its two hosts, tried in
// this order: the first that splits it into exactly two parts wins, so
// that "gpu-01_gpu-02" splits at "_" and "nodeA-nodeB" at "-".
var nameSeparators = []string{"__", "--", "_vs_", "-vs-", ".vs.", "_to_", "-to-", "+", ",", "_", "-"}

// namePrefixes are words that pairwise scripts put before the hosts in a
// log's name ("pair_nodeA_nodeB.txt", "nccl_N2_G1_nodeA_nodeB.log"); they
// are removed from the front of the stem, as are run shapes like N2, G8.
var namePrefixes = regexp.MustCompile(`^(?i)(?:(?:pairs?|nccl|rccl|hccl|logs?|test|perf|sendrecv|allreduce|all_reduce|alltoall|[NGgn]\d+)[_\-.])+`)

// NameHosts returns the two hosts a log's file name names, or nil. Known
// hosts (from other logs' rank lines) are looked for first: two of them
// in the name, each a whole part of it. Otherwise the stem (the name
// without extensions such as .log, .txt, .out, .csv, and without the
// prefixes of namePrefixes) is split at the first of nameSeparators that
// yields two parts.
func NameHosts(path string, known []string) []string {
	stem := filepath.Base(path)
	for {
		ext := filepath.Ext(stem)
		switch strings.ToLower(ext) {
		case ".log", ".txt", ".out", ".err", ".csv", ".json", ".jsonl":
			stem = strings.TrimSuffix(stem, ext)
			continue
		}
		break
	}
	if hs := knownIn(stem, known); hs != nil {
		return hs
	}
	stem = namePrefixes.ReplaceAllString(stem, "")
	for _, sep := range nameSeparators {
		parts := strings.Split(stem, sep)
		if len(parts) == 2 && parts[0] != "" && parts[1] != "" && parts[0] != parts[1] {
			return parts
		}
	}
	return nil
}

// knownIn returns the two hosts of known that stem holds as whole parts
// (at its ends or between non-alphanumeric characters), in the order they
// appear; nil unless exactly two do.
func knownIn(stem string, known []string) []string {
	type at struct {
		host string
		i    int
	}
	var found []at
	for _, h := range known {
		for i := 0; ; {
			j := strings.Index(stem[i:], h)
			if j < 0 {
				break
			}
			j += i
			end := j + len(h)
			if (j == 0 || !alnum(stem[j-1])) && (end == len(stem) || !alnum(stem[end])) {
				found = append(found, at{h, j})
				break
			}
			i = j + 1
		}
	}
	if len(found) != 2 {
		return nil
	}
	slices.SortFunc(found, func(a, b at) int { return a.i - b.i })
	return []string{found[0].host, found[1].host}
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
