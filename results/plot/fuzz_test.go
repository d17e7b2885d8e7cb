package plot

import (
	"math"
	"os"
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
	f.Fuzz(func(t *testing.T, data []byte) {
		var l loader
		if err := l.load(data, "fuzz"); err != nil {
			return
		}
		for _, s := range group(l.samples).Series {
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
