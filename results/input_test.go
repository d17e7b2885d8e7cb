package results

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadSamplesLongFirstLine reads files of one line of 50 MB: the
// error says what the line looked like and why it is refused, after
// reading 1 MiB of it, not that a Go benchmark line was too long.
func TestReadSamplesLongFirstLine(t *testing.T) {
	dir := t.TempDir()
	oneLine := func(name, start string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(start), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 50e6); err != nil { // the rest reads as zeros
			t.Fatal(err)
		}
		return p
	}
	header := strings.Join(csvRequired, ",")
	for _, tc := range []struct{ name, start, want string }{
		{"csv.csv", header + ",", ":1: a line longer than 1 MiB that starts as the header of an hccl-test CSV"},
		{"bom.csv", bom + "op," + header, ":1: a line longer than 1 MiB that starts as the header of an hccl-test CSV"},
		{"text.txt", "BenchmarkAllReduce 1 1 ns/op ", ":1: a line longer than 1 MiB: no line of an hccl-test CSV or Go benchmark file"},
		{"after-comments.csv", "# made by hand\n\n" + header + ",", ":3: a line longer than 1 MiB that starts as the header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := oneLine(tc.name, tc.start)
			_, err := ReadSamples(path)
			if err == nil || !strings.HasPrefix(err.Error(), path+tc.want) || strings.Contains(err.Error(), "benchmark line") {
				t.Fatalf("error %v, want %q", err, path+tc.want)
			}
		})
	}
}

// TestReadSamplesPastOldLimit reads back a CSV as large as a -N 0 run
// writes in half a minute, past the 64 MiB that was the most read of any
// file: every row is read.
func TestReadSamplesPastOldLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 70 MB")
	}
	path, rows, names := cyclesCSV(t, MaxInputBytes+4<<20)
	s, err := ReadSamples(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.keys) != 3*names {
		t.Fatalf("%d rows in units, want %d", len(s.keys), 3*names)
	}
	for _, k := range s.keys {
		if n := len(s.values[k]); n != rows/names {
			t.Errorf("%s %s: %d measurements, want %d", k.name, k.unit, n, rows/names)
		}
	}
}

// cyclesCSV writes a CSV of at least size bytes as a run of -N 0 does: the
// same sweep again and again. It returns the file, its rows and the
// distinct rows of a sweep.
func cyclesCSV(t *testing.T, size int) (path string, rows, names int) {
	t.Helper()
	var sw bytes.Buffer
	writeAll(t, NewCSV(&sw), fmtHeader(), sweep(1, 0, nil))
	header, cycle, _ := bytes.Cut(sw.Bytes(), []byte("\n"))
	names = bytes.Count(cycle, []byte("\n"))
	n := size/len(cycle) + 1
	path = filepath.Join(t.TempDir(), "cycles.csv")
	data := append(append(header, '\n'), bytes.Repeat(cycle, n)...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, n * names, names
}

// TestReadSamplesManyRuns reads a row measured more than MaxRuns times:
// Samples keeps MaxRuns of its measurements, every one of them from the
// file, and says how many the file had.
func TestReadSamplesManyRuns(t *testing.T) {
	const n = MaxRuns + MaxRuns/2
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "BenchmarkAllReduce/size=1KiB 1 %d ns/op\n", 1000+i)
	}
	path := filepath.Join(t.TempDir(), "many.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSamples(path)
	if err != nil {
		t.Fatal(err)
	}
	k := sampleKey{"AllReduce/size=1KiB", "sec/op"}
	vals := s.values[k]
	if len(vals) != MaxRuns {
		t.Fatalf("%d measurements kept, want %d", len(vals), MaxRuns)
	}
	seen := map[float64]bool{}
	late := 0 // kept from the measurements past the first MaxRuns
	for _, v := range vals {
		i := int(v*1e9+0.5) - 1000
		if i < 0 || i >= n || seen[v] {
			t.Fatalf("kept %v: not a measurement of the file, or twice", v)
		}
		seen[v] = true
		if i >= MaxRuns {
			late++
		}
	}
	// A uniform sample keeps a third of them from the last third.
	if want := MaxRuns / 3; late < want*9/10 || late > want*11/10 {
		t.Errorf("%d kept from the last third, want about %d", late, want)
	}
	if got := s.Sampled()[k.name+" "+k.unit]; got != n {
		t.Errorf("Sampled says %d measurements, want %d", got, n)
	}
}

// TestReadSamplesLongRow reads a CSV whose second line is longer than
// MaxLineBytes: refused naming the line and what a row of ours is.
func TestReadSamplesLongRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long-row.csv")
	data := strings.Join(csvRequired, ",") + "\n" + strings.Repeat("1", MaxLineBytes+1) + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadSamples(path)
	want := path + ":2: a line longer than 1 MiB: an hccl-test CSV row is about 1 KiB"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}
