package payload

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLLCFrom reads the highest cache level sysfs reports, and falls back
// to DefaultLLCBytes where it reports none.
func TestLLCFrom(t *testing.T) {
	dir := t.TempDir()
	write := func(index, level, size string) {
		d := filepath.Join(dir, index)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{"level": level + "\n", "size": size + "\n"} {
			if err := os.WriteFile(filepath.Join(d, name), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := llcFrom(dir); got != DefaultLLCBytes {
		t.Errorf("no levels: %d, want the default %d", got, DefaultLLCBytes)
	}
	write("index0", "1", "32K")
	write("index2", "2", "1024K")
	write("index3", "3", "32768K")
	write("index4", "x", "64M") // unreadable level: skipped
	if got := llcFrom(dir); got != 32<<20 {
		t.Errorf("got %d, want level 3's 32 MiB", got)
	}
}

func TestColdSets(t *testing.T) {
	for _, tc := range []struct {
		llc, stride int64
		hosted      int
		want        int
	}{
		{32 << 20, 1 << 10, 4, MaxColdSets},
		{32 << 20, 4 << 20, 4, 4},
		{32 << 20, 5 << 20, 4, 4}, // 64 MiB over 20 MiB: 3.2, rounded up
		{32 << 20, 1 << 30, 4, 1},
		{32 << 20, 0, 4, MaxColdSets},
	} {
		if got := ColdSets(tc.llc, tc.stride, tc.hosted); got != tc.want {
			t.Errorf("ColdSets(%d, %d, %d) = %d, want %d", tc.llc, tc.stride, tc.hosted, got, tc.want)
		}
		// The region of ColdRegionBytes holds every row's sets.
		if tc.stride > 0 {
			if region := ColdRegionBytes(tc.llc, tc.stride, tc.hosted); int64(ColdSets(tc.llc, tc.stride, tc.hosted))*tc.stride > region {
				t.Errorf("ColdRegionBytes(%d, %d, %d) = %d, too small for its sets", tc.llc, tc.stride, tc.hosted, region)
			}
		}
	}
}
