package traffic

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// Limits of a matrix file.
const (
	// MaxFileBytes is the largest matrix file read: 1 GiB, room for
	// 4096 x 4096 cells of up to 63 characters each.
	MaxFileBytes = 1 << 30
	// MaxLineBytes is the longest line of a matrix file: 1 MiB.
	MaxLineBytes = 1 << 20
	// MaxScale is the largest NCCL_TESTS_ALLTOALLV_MATRIX_SCALE.
	MaxScale = 1e12
)

// ReadFile reads the matrix file at path in nccl-tests' format, each value
// multiplied by scale, truncated to whole bytes and aligned down to Align,
// as nccl-tests 2.19 reads NCCL_TESTS_ALLTOALLV_MATRIX_FILE with
// NCCL_TESTS_ALLTOALLV_MATRIX_SCALE. Only a regular file is read: a
// directory, a named pipe (opened never, so nothing blocks), a device or a
// socket is refused, and so is a missing, empty or larger than
// MaxFileBytes file. Errors are one line naming path.
func ReadFile(path string, scale float64) (*Matrix, error) {
	st, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("traffic matrix %s: %w", path, pe.Err)
		}
		return nil, fmt.Errorf("traffic matrix %s: %w", path, err)
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should path become a named pipe between Stat and open,
	// the open returns at once rather than wait for a writer; the second
	// check below then refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("traffic matrix %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	st2, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("traffic matrix %s: %w", path, unwrapPath(err))
	}
	if err := regular(path, st2); err != nil {
		return nil, err
	}
	if !os.SameFile(st, st2) {
		return nil, fmt.Errorf("traffic matrix %s: the file changed while it was opened", path)
	}
	if st2.Size() > MaxFileBytes {
		return nil, fmt.Errorf("traffic matrix %s: %d bytes, larger than the limit of %d", path, st2.Size(), MaxFileBytes)
	}
	return Parse(io.LimitReader(f, MaxFileBytes+1), path, scale)
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// regular refuses anything but a regular file, naming what it is.
func regular(path string, st fs.FileInfo) error {
	mode := st.Mode()
	what := ""
	switch {
	case mode.IsRegular():
		return nil
	case mode.IsDir():
		what = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode&fs.ModeDevice != 0:
		what = "a device"
	default:
		what = "not a regular file (" + mode.Type().String() + ")"
		return fmt.Errorf("traffic matrix %s: %s", path, what)
	}
	return fmt.Errorf("traffic matrix %s: is %s, not a regular file", path, what)
}

// Parse reads a matrix in nccl-tests' format from r; name is the file's
// name for errors. Values are separated by any white space; a line holds
// one row, and lines with no value are skipped; every row has as many
// values as there are rows. A value is a whole number of bytes, written
// as digits with an optional fraction of zeros and exponent (4096, 1e6,
// 1.5e3): nccl-tests reads it with strtod and truncates it, but a
// fraction, a negative value, NaN, an infinity, a hexadecimal number or a
// value or row over MaxRankBytes is refused here with the line and the
// column. Each value is multiplied by scale (as nccl-tests does, in 64-bit
// extended precision, x86-64's long double), truncated, and aligned down
// to Align.
func Parse(r io.Reader, name string, scale float64) (*Matrix, error) {
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale < 0 || scale > MaxScale {
		return nil, fmt.Errorf("traffic matrix %s: scale %v: want a finite number from 0 to %g", name, scale, MaxScale)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	limit := maxDense()
	var (
		cells []int64
		cols  int
		rows  int
		line  int
		vals  []string
	)
	for sc.Scan() {
		line++
		vals = strings.Fields(sc.Text())
		if len(vals) == 0 {
			continue
		}
		if rows == 0 {
			cols = len(vals)
			if cols > limit {
				return nil, fmt.Errorf("traffic matrix %s: line %d: %d columns, more than the %d ranks a whole matrix may hold", name, line, cols, limit)
			}
			cells = make([]int64, 0, cols) // grows with the rows read, not the rows promised
		} else if len(vals) != cols {
			return nil, fmt.Errorf("traffic matrix %s: line %d: %d values, but the first row has %d: not a square matrix", name, line, len(vals), cols)
		}
		if rows == cols {
			return nil, fmt.Errorf("traffic matrix %s: line %d: row %d, but the rows have %d columns: not a square matrix", name, line, rows+1, cols)
		}
		var sum int64
		for c, v := range vals {
			b, err := cell(v, scale)
			if err != nil {
				return nil, fmt.Errorf("traffic matrix %s: line %d, column %d: %q: %v", name, line, c+1, v, err)
			}
			if sum += b; sum > MaxRankBytes {
				return nil, fmt.Errorf("traffic matrix %s: line %d: the row sends more than the limit of %d bytes", name, line, int64(MaxRankBytes))
			}
			cells = append(cells, b)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("traffic matrix %s: line %d: longer than the limit of %d bytes", name, line+1, MaxLineBytes)
		}
		return nil, fmt.Errorf("traffic matrix %s: read: %w", name, unwrapPath(err))
	}
	switch {
	case rows == 0:
		return nil, fmt.Errorf("traffic matrix %s: empty: no values", name)
	case rows != cols:
		return nil, fmt.Errorf("traffic matrix %s: %d rows of %d columns: not a square matrix", name, rows, cols)
	}
	return &Matrix{n: rows, cells: cells}, nil
}

// decimal is the spelling of a value: digits with an optional point,
// fraction and exponent. strtod's hexadecimal numbers, infinities and NaNs
// are refused by it or by the checks after it.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// cell reads one value and returns its bytes, scaled and aligned.
func cell(s string, scale float64) (int64, error) {
	if !decimal.MatchString(s) {
		switch strings.ToLower(strings.TrimLeft(s, "+-")) {
		case "nan", "inf", "infinity":
			return 0, errors.New("not a finite number")
		}
		return 0, errors.New("not a decimal number of bytes")
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, errors.New("not a decimal number of bytes")
	case v < 0 || strings.HasPrefix(s, "-") && !allZero(s):
		return 0, errors.New("negative bytes")
	case v > MaxRankBytes: // an overflow (1e400) too
		return 0, fmt.Errorf("more than the limit of %d bytes", int64(MaxRankBytes))
	case !whole(s):
		return 0, errors.New("a fraction of a byte: want a whole number")
	}
	b := int64(v)
	if scale != 1 {
		p := new(big.Float).SetPrec(64).SetFloat64(v)
		p.Mul(p, new(big.Float).SetPrec(64).SetFloat64(scale))
		if p.Cmp(big.NewFloat(MaxRankBytes)) > 0 {
			return 0, fmt.Errorf("scaled by %g, more than the limit of %d bytes", scale, int64(MaxRankBytes))
		}
		b, _ = p.Int64() // truncates toward zero, as C's conversion does
	}
	return b &^ (Align - 1), nil
}

// allZero reports whether the mantissa of the decimal s has only zeros.
func allZero(s string) bool {
	m, _, _ := strings.Cut(strings.ToLower(s), "e")
	return strings.Trim(m, "+-0.") == ""
}

// whole reports whether the decimal s (matched by decimal) is a whole
// number, from its digits rather than its float64 value, in which 1e-400
// is 0 and 9007199254740993.5 is whole.
func whole(s string) bool {
	if allZero(s) {
		return true
	}
	m, e, _ := strings.Cut(strings.ToLower(strings.TrimLeft(s, "+-")), "e")
	ip, fp, _ := strings.Cut(m, ".")
	digits := strings.TrimLeft(ip+fp, "0")
	exp := -len(fp)
	if e != "" {
		x, err := strconv.Atoi(e)
		if err != nil || x < -1<<20 || x > 1<<20 {
			// Past what a line of MaxLineBytes can undo with its digits:
			// a fraction below, a number over the limit (refused before)
			// above.
			return e[0] != '-'
		}
		exp += x
	}
	for strings.HasSuffix(digits, "0") {
		digits, exp = digits[:len(digits)-1], exp+1
	}
	return exp >= 0
}
