package memguard

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Resident returns this process's resident set size in bytes, from
// /proc/self/statm (its second field, in pages). Once SetOwnShared has
// said how much of its shared memory is its own, it counts its private
// pages (the second field less the third, shared ones) and that much
// instead: the kernel counts a shared page in the resident size of every
// process that maps it, so ranks that map each other's buffers (proc)
// would each be charged for all of them.
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
	if own := ownShared.Load(); own != nil {
		return (pages-shared)*page + (*own)(), nil
	}
	return pages * page, nil
}
