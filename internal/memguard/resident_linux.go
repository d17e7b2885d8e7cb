package memguard

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Resident returns this process's resident set size in bytes, from
// /proc/self/statm (its second field, in pages).
func Resident() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("reading the resident size: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("reading the resident size: /proc/self/statm: %q", b)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading the resident size: %w", err)
	}
	return pages * int64(os.Getpagesize()), nil
}
