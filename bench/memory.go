package bench

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// AvailableMemory returns the memory the kernel says new work can use
// (MemAvailable in /proc/meminfo) in bytes, or 0 when it cannot tell.
func AvailableMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
