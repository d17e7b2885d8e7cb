package plot

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary file contents to the readers: they must not
// panic, and what they accept must group into sorted points of positive
// sizes with medians that are values or NaN, never infinite, with times
// positive and bandwidths not negative.
func FuzzLoad(f *testing.F) {
	for _, path := range []string{
		writeFile(f, "a.csv", csvSink, testHeader(12.5), testRecords(1, 2)),
		writeFile(f, "a.txt", benchSink, testHeader(0), testRecords(3)),
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("schema_version,op,size_bytes,time_us,busbw_GBps\n1,x,1024,,\n"))
	f.Add([]byte("BenchmarkX/size=1.5KiB 1 100 ns/op 3 busbw-GB/s\n"))
	f.Add([]byte("\ufeffbusbw_GBps,time_us,size_bytes,op,schema_version\r\n1,100,1024,allreduce,1\r\n"))
	path := filepath.Join(f.TempDir(), "fuzz") // one at a time: inputs run in turn
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var l loader
		if err := l.loadFile(path); err != nil {
			return
		}
		l.endFile(0)
		for _, s := range l.data([]string{""}).Series {
			for i, p := range s.Points {
				if p.Bytes <= 0 || (i > 0 && p.Bytes <= s.Points[i-1].Bytes) || p.Rows < 1 {
					t.Fatalf("series %q point %d: %+v", s.Label, i, p)
				}
				if math.IsInf(p.TimeUS, 0) || math.IsInf(p.BusBW, 0) {
					t.Fatalf("series %q point %d: infinite value %+v", s.Label, i, p)
				}
				if p.TimeUS <= 0 || p.BusBW < 0 {
					t.Fatalf("series %q point %d: a time not positive or a negative bandwidth %+v", s.Label, i, p)
				}
			}
		}
	})
}
