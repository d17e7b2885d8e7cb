package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/hccl-test/hccl-test/internal/boundedfile"
	"github.com/hccl-test/hccl-test/results/peerlog"
)

// MaxInputBytes is the most read of a pipe or a device (which may never
// end) by ReadSamples and plot.Load, and of another tool's log, which is
// parsed whole. A regular file of hccl-test's CSV or Go benchmark lines is
// read to its end whatever its size: those readers stream, and what they
// keep grows with the rows, not the bytes (see MaxRuns).
const MaxInputBytes = 64 << 20

// MaxLineBytes is the longest line an input may hold. A CSV row of
// hccl-test is under 1 KiB, a Go benchmark line at most 64 KiB (benchfmt's
// scanner), so a longer line is no row of ours and is refused rather than
// held in memory.
const MaxLineBytes = 1 << 20

// logPeek is how much of a file OpenInput reads to tell its format: the
// first line, and enough of another tool's log to find a row in it.
const logPeek = 1 << 20

// Format is what a file of results holds, as OpenInput tells it from its
// first bytes.
type Format int

// The formats OpenInput tells apart.
const (
	// FormatBench is the Go benchmark format (--bench; what benchstat
	// reads): every file that is none of the others.
	FormatBench Format = iota
	// FormatCSV is hccl-test's CSV (--csv): its first line that is
	// neither blank nor a '#' comment is a header with a schema_version
	// column, wherever that column is.
	FormatCSV
	// FormatLog is the log of another tool (see ReadLog): a row of one in
	// the first MiB.
	FormatLog
	// FormatJSON is JSON lines (--json), which compare and plot do not read.
	FormatJSON
)

// bom is the UTF-8 byte-order mark some editors and spreadsheets put at
// the start of a text file.
const bom = "\xef\xbb\xbf"

// Input is a file of results opened by OpenInput. Read returns its bytes
// from the start, without a byte-order mark; Err is the file's own failure.
type Input struct {
	Path   string // as given to OpenInput
	Format Format // as told from the first bytes
	f      *boundedfile.File
	head   []byte // the bytes read to tell the format, byte-order mark removed
	r      io.Reader
}

// OpenInput opens the file at path through boundedfile (a regular file to
// its end, a pipe or device up to MaxInputBytes; no line longer than
// MaxLineBytes) and tells its format. A file whose first line is longer
// than MaxLineBytes is refused here, saying what it looked like. Errors
// name path.
func OpenInput(path string) (*Input, error) {
	f, err := boundedfile.OpenStream(path, MaxInputBytes)
	if err != nil {
		return nil, err
	}
	f.SetMaxLine(MaxLineBytes)
	head := make([]byte, logPeek)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if err := f.Err(); err != nil {
		f.Close()
		return nil, err
	}
	in := &Input{Path: path, f: f}
	line, first, ended := firstLine(head)
	if bytes.HasPrefix(head, []byte(bom)) {
		head = head[len(bom):]
		if line == 1 {
			first = first[len(bom):]
		}
	}
	in.head, in.r = head, io.MultiReader(bytes.NewReader(head), f)
	// The first line fills the bytes read without ending (where every
	// line before the cut is a comment, the cut line is not the first:
	// a log's header can be longer than the bytes read).
	if n == logPeek && !ended && (first != nil || !bytes.Contains(head, []byte("\n"))) {
		f.Close()
		if isCSVHeader(first[:min(len(first), 64<<10)]) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d MiB that starts as the header of an hccl-test CSV: "+
				"no header or row of ours is that long (about 1 KiB)", path, line, MaxLineBytes>>20)
		}
		return nil, fmt.Errorf("%s:%d: a line longer than %d MiB: no line of an hccl-test CSV or Go benchmark file, "+
			"nor of another tool's log, is that long", path, line, MaxLineBytes>>20)
	}
	switch complete := head[:bytes.LastIndexByte(head, '\n')+1]; {
	case isCSVHeader(first):
		in.Format = FormatCSV
	case peerlog.Looks(complete) || (n < logPeek && peerlog.Looks(head)):
		in.Format = FormatLog
	case first == nil && n == logPeek && peerlog.Starts(complete): // rank lines past the first MiB
		in.Format = FormatLog
	case bytes.HasPrefix(first, []byte("{")):
		in.Format = FormatJSON
	}
	return in, nil
}

// firstLine returns the first line of data that is neither blank nor a
// '#' comment, without its line end, its number from 1, and whether it
// ends in data (a newline follows it). Without such a line it returns the
// number of the last line, nil, and whether data ends a line.
func firstLine(data []byte) (n int, line []byte, ended bool) {
	for l := range bytes.Lines(data) {
		n++
		s := bytes.TrimSpace(bytes.TrimPrefix(l, []byte(bom)))
		ended = bytes.HasSuffix(l, []byte("\n"))
		if len(s) > 0 && s[0] != '#' {
			return n, bytes.TrimRight(l, "\r\n"), ended
		}
	}
	return max(n, 1), nil, ended || len(data) == 0
}

// isCSVHeader reports whether line is the header of an hccl-test CSV: a
// row of fields one of which is schema_version.
func isCSVHeader(line []byte) bool {
	if !bytes.Contains(line, []byte("schema_version")) {
		return false
	}
	r := csv.NewReader(bytes.NewReader(line))
	r.LazyQuotes = true
	row, err := r.Read()
	return err == nil && isHeader(row)
}

// isHeader reports whether row, read as CSV, is a header: whether one of
// its fields is schema_version. A byte-order mark before the first is
// removed.
func isHeader(row []string) bool {
	if len(row) > 0 {
		row[0] = trimBOM(row[0])
	}
	return slices.Contains(row, "schema_version")
}

func trimBOM(s string) string {
	if len(s) >= len(bom) && s[:len(bom)] == bom {
		return s[len(bom):]
	}
	return s
}

// Read reads the file's bytes from its start.
func (in *Input) Read(p []byte) (int, error) { return in.r.Read(p) }

// Err returns the file's own failure, if any, which a parser reading it
// may have told in words of its own or not at all: past MaxInputBytes of
// a pipe, stalled, or a line longer than MaxLineBytes.
func (in *Input) Err() error {
	err := in.f.Err()
	var le *boundedfile.LineError
	if errors.As(err, &le) {
		what := map[Format]string{FormatCSV: "an hccl-test CSV row is about 1 KiB", FormatLog: "no line of a log is that long",
			FormatBench: "a Go benchmark line holds at most 64 KiB", FormatJSON: "no line of ours is that long"}[in.Format]
		return fmt.Errorf("%w: %s", err, what)
	}
	return err
}

// Line is the number, from 1, of the line the next byte read from the
// file belongs to (see boundedfile.File.Line); a reader that reads ahead,
// as a bufio.Scanner does, has parsed less.
func (in *Input) Line() int { return in.f.Line() }

// Head is the start of the file read to tell its format, without a
// byte-order mark: at most 1 MiB. The caller must not modify it.
func (in *Input) Head() []byte { return in.head }

// ReadAll reads the whole file, from its start: at most MaxInputBytes, for
// a format that is parsed whole (another tool's log).
func (in *Input) ReadAll() ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(in.r, MaxInputBytes+1))
	if err == nil && len(data) > MaxInputBytes {
		err = fmt.Errorf("%s: a log of another tool larger than the limit of %d MiB for one", in.Path, MaxInputBytes>>20)
	}
	if ferr := in.Err(); ferr != nil {
		return nil, ferr
	}
	return data, err
}

// Close closes the file.
func (in *Input) Close() error { return in.f.Close() }
