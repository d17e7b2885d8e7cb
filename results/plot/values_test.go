package plot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRefusesValues loads files with values that cannot be times or
// bandwidths: each is refused naming the file and line, where they were
// left out of the plot without a word.
func TestLoadRefusesValues(t *testing.T) {
	for _, tc := range []struct{ file, wantErr string }{
		{"nan-time.txt", "nan-time.txt: line 3: NaN ns/op: not a time (want a positive number)"},
		{"negative-time.txt", "negative-time.txt: line 2: -1000 ns/op: not a time"},
		{"zero-time.txt", "zero-time.txt: line 1: 0 ns/op: not a time"},
		{"inf-busbw.txt", "inf-busbw.txt: line 1: +Inf busbw-GB/s: not a bandwidth (want a number of at least 0)"},
		{"nan-time.csv", "nan-time.csv: CSV line 3: time_us NaN: not a time"},
		{"negative-time.csv", "negative-time.csv: CSV line 2: time_us -84.2: not a time"},
		{"negative-busbw.csv", "negative-busbw.csv: CSV line 2: busbw_GBps -0.02: not a bandwidth"},
		{"bad-time.csv", `bad-time.csv: CSV line 2: time_us "8x4.2": not a number`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := Load(filepath.Join("..", "testdata", "compare", tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestLoadNothingToDraw refuses files whose rows have neither a time nor a
// bandwidth, which Write could draw nothing of.
func TestLoadNothingToDraw(t *testing.T) {
	path := filepath.Join(t.TempDir(), "unknown.csv")
	if err := os.WriteFile(path, []byte("schema_version,op,size_bytes,time_us,busbw_GBps\n1,allreduce,1024,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), path+": no row has a time or a bus bandwidth") {
		t.Fatalf("error %v, want ErrNoData naming %s", err, path)
	}
}
