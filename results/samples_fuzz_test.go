package results

import (
	"bytes"
	"cmp"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzReadSamples checks that ReadSamples never panics, returns samples or
// an error and never both, names the file in every error and warning, and
// that samples it returns hold at least one measurement, every one a
// value its unit allows (CheckMeasurement). The seeds are the compare test
// data and a short sweep as --csv and --bench write it.
func FuzzReadSamples(f *testing.F) {
	files, _ := filepath.Glob("testdata/compare/*")
	if len(files) == 0 {
		f.Fatal("no seed files")
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	h := Header{Version: "0.1.0", Backend: "shm", Ranks: 8, Algo: "auto", Placement: "out", Check: true,
		Started: time.Date(2026, 11, 29, 17, 30, 0, 0, time.UTC), Host: "node01"}
	for _, newSink := range []func(io.Writer) Sink{csvSink, benchSink} {
		var buf bytes.Buffer
		s := newSink(&buf)
		err := s.Begin(h)
		for _, r := range sweep(2, 0, nil) {
			err = cmp.Or(err, s.Write(r))
		}
		if err = cmp.Or(err, s.End(Summary{})); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	path := filepath.Join(f.TempDir(), "samples") // one at a time: inputs run in turn
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSamples(path)
		if (s == nil) == (err == nil) {
			t.Fatalf("got samples %v and error %v: want exactly one", s, err)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, w := range s.Warnings {
			if !strings.HasPrefix(w.Error(), path) {
				t.Fatalf("warning %q does not name the file", w)
			}
		}
		if len(s.keys) == 0 || len(s.keys) != len(s.values) {
			t.Fatalf("%d keys, %d value lists", len(s.keys), len(s.values))
		}
		for _, k := range s.keys {
			// A name may be empty: benchfmt reads "Benchmark 1 2 ns/op" as
			// the row "", as benchstat does.
			if k.unit == "" || len(s.values[k]) == 0 {
				t.Fatalf("row %q unit %q: %d values", k.name, k.unit, len(s.values[k]))
			}
			for _, v := range s.values[k] {
				if why := CheckMeasurement(v, k.unit); why != "" {
					t.Fatalf("row %q: %v %s kept: %s", k.name, v, k.unit, why)
				}
			}
		}
	})
}
