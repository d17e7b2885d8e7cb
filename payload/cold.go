package payload

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hccl-test/hccl-test/internal/hugemem"
	"github.com/hccl-test/hccl-test/internal/limits"
)

// DefaultLLCBytes is the last-level cache assumed where the machine does
// not say (LLCBytes): larger than most servers' per-socket cache.
const DefaultLLCBytes = 32 << 20

// MaxColdSets bounds the buffer sets a row rotates through with a cold
// cache (ColdSets): beyond it the sets of the smallest rows take memory
// for no more effect.
const MaxColdSets = 64

// LLCBytes returns the size of this machine's last-level cache, the
// highest level cpu0 reports under /sys/devices/system/cpu, or
// DefaultLLCBytes when it reports none.
func LLCBytes() int64 {
	return llcFrom("/sys/devices/system/cpu/cpu0/cache")
}

// llcFrom reads the cache levels under dir (index*/level and index*/size).
func llcFrom(dir string) int64 {
	idx, _ := filepath.Glob(filepath.Join(dir, "index*"))
	var level, size int64
	for _, d := range idx {
		l, err1 := readInt(filepath.Join(d, "level"))
		s, err2 := readSize(filepath.Join(d, "size"))
		if err1 != nil || err2 != nil || s <= 0 {
			continue
		}
		if l > level || (l == level && s > size) {
			level, size = l, s
		}
	}
	if size <= 0 {
		return DefaultLLCBytes
	}
	return size
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// readSize reads a size as sysfs writes it: "32768K", "8M" or bytes.
func readSize(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mul, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return limits.SatMul(v, mul), err
}

// ColdSets returns how many buffer sets of stride bytes each of hosted
// ranks rotates through so that an iteration's data comes from memory,
// not from a last-level cache of llc bytes: enough sets that the data of
// all the sets together is twice the cache, at most MaxColdSets, and at
// least 1.
func ColdSets(llc, stride int64, hosted int) int {
	per := limits.SatMul(stride, int64(max(hosted, 1)))
	if per <= 0 {
		return MaxColdSets
	}
	k := (limits.SatMul(2, llc) + per - 1) / per
	return int(min(max(k, 1), MaxColdSets))
}

// ColdRegionBytes is the memory one of hosted ranks takes for the buffer
// sets of a cold cache when no row's set (its send and receive buffers)
// is larger than maxStride: the most any row's ColdSets x its stride
// comes to.
func ColdRegionBytes(llc, maxStride int64, hosted int) int64 {
	perRank := (limits.SatMul(2, llc) + int64(max(hosted, 1)) - 1) / int64(max(hosted, 1))
	return min(limits.SatMul(MaxColdSets, maxStride), limits.SatAdd(perRank, maxStride))
}

// ColdRegion is one rank's memory for the rotated buffer sets of a cold
// cache, allocated once per sweep and touched, out of which each row cuts
// its sets (Set).
type ColdRegion struct {
	Mem  []byte
	free func()
}

// Alloc gives the region size fresh bytes, every page touched. On an
// error it holds nothing.
func (c *ColdRegion) Alloc(size int64) error {
	mem, free, err := hugemem.Alloc(int(size))
	if err != nil {
		return err
	}
	c.Mem, c.free = mem, free
	Touch(c.Mem)
	return nil
}

// Free releases the region. Nobody may use it afterwards.
func (c *ColdRegion) Free() {
	if c.free != nil {
		c.free()
	}
	*c = ColdRegion{}
}

// Sets returns how many sets of two buffers of half bytes each the region
// holds.
func (c *ColdRegion) Sets(half int64) int {
	if half <= 0 {
		return MaxColdSets
	}
	return int(int64(len(c.Mem)) / (2 * half))
}

// Set returns buffer set i of sets of two buffers of half bytes each,
// laid one after the other in the region: a view, not to be freed. The
// region must hold i+1 such sets (Sets).
func (c *ColdRegion) Set(i int, half int64) *BufferPool {
	at := 2 * int64(i) * half
	return &BufferPool{A: c.Mem[at : at+half : at+half], B: c.Mem[at+half : at+2*half : at+2*half]}
}
