package memguard

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// sharedThreshold is how many bytes of this process's resident memory
// may be shared with other mappings before Resident counts its
// proportional share instead (Pss), which costs a walk of its page tables.
const sharedThreshold = 64 << 20

// Resident returns this process's resident set size in bytes, from
// /proc/self/statm (its second field, in pages). When more than
// sharedThreshold of it is shared (the third field: memory that other
// processes, or other mappings of this one, may map too, as proc's ranks
// map each other's buffers), every mapping of a shared page counts in
// the resident size of every process that maps it, so it returns the
// proportional set size instead (Pss in /proc/self/smaps_rollup): each
// shared page divided among its mappings, which over all the processes
// sums to the memory they take.
func Resident() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("reading the resident size: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, fmt.Errorf("reading the resident size: /proc/self/statm: %q", b)
	}
	pages, err1 := strconv.ParseInt(f[1], 10, 64)
	shared, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("reading the resident size: /proc/self/statm: %q", b)
	}
	page := int64(os.Getpagesize())
	if shared*page > sharedThreshold {
		if pss, err := proportional(); err == nil {
			return pss, nil
		}
	}
	return pages * page, nil
}

// proportional returns Pss from /proc/self/smaps_rollup, in bytes.
func proportional() (int64, error) {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "Pss:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no Pss in /proc/self/smaps_rollup")
}
