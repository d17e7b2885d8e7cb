package traffic

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Limits of a matrix. A generator gives rows for up to MaxRanks ranks, but
// a whole matrix is held in memory only up to MaxCells cells (4096 ranks,
// 128 MiB of int64): past that a caller works row by row (Generator.Row).
const (
	// MaxRanks is the most ranks a spec or a generator accepts.
	MaxRanks = 65536
	// MaxCells is the most cells (ranks squared) a Matrix may hold.
	MaxCells = 1 << 24
	// MaxRankBytes bounds the bytes one rank sends (the sum of its row),
	// and so every cell: 64 TiB, so that the bytes any rank receives from
	// MaxRanks senders still fit an int64.
	MaxRankBytes = 1 << 46
	// Align is the alignment of every cell nccl-tests uses and this
	// package keeps: a multiple of 16 bytes divides into elements of every
	// data type.
	Align = 16
)

// Matrix is the bytes each rank sends to each rank in one iteration:
// At(src, dst) is what src sends to dst (the diagonal is what a rank keeps
// for itself). Its zero value is an empty matrix of no ranks. A Matrix is
// not safe for concurrent writes; concurrent reads are safe.
type Matrix struct {
	n     int
	cells []int64 // row-major: cells[src*n+dst]
}

// NewMatrix returns an n x n matrix of zeros. It refuses n below 1, above
// MaxRanks, or with more than MaxCells cells.
func NewMatrix(n int) (*Matrix, error) {
	if err := checkDense(n); err != nil {
		return nil, err
	}
	return &Matrix{n: n, cells: make([]int64, n*n)}, nil
}

func checkDense(n int) error {
	switch {
	case n < 1:
		return fmt.Errorf("traffic matrix: %d ranks: want at least 1", n)
	case n > MaxRanks:
		return fmt.Errorf("traffic matrix: %d ranks: more than the limit of %d", n, MaxRanks)
	case n*n > MaxCells:
		return fmt.Errorf("traffic matrix: %d ranks: %d cells, more than the %d a whole matrix may hold in memory (at most %d ranks; use a generator's rows)",
			n, n*n, MaxCells, maxDense())
	}
	return nil
}

// maxDense is the most ranks a whole Matrix holds.
func maxDense() int {
	n := 1
	for (n+1)*(n+1) <= MaxCells {
		n++
	}
	return n
}

// Ranks returns n, the number of rows and of columns.
func (m *Matrix) Ranks() int { return m.n }

// At returns the bytes src sends to dst.
func (m *Matrix) At(src, dst int) int64 { return m.cells[src*m.n+dst] }

// Set sets the bytes src sends to dst. It panics on a negative count,
// which is a caller's bug: user input is checked where it is read.
func (m *Matrix) Set(src, dst int, bytes int64) {
	if bytes < 0 {
		panic(fmt.Sprintf("traffic: Set(%d, %d, %d): negative bytes", src, dst, bytes))
	}
	m.cells[src*m.n+dst] = bytes
}

// Row returns the bytes src sends to each rank. The slice is the matrix's
// own: the caller must not change it.
func (m *Matrix) Row(src int) []int64 { return m.cells[src*m.n : (src+1)*m.n] }

// Column returns a new slice of the bytes each rank sends to dst: what
// dst receives from each, its receive counts.
func (m *Matrix) Column(dst int) []int64 {
	col := make([]int64, m.n)
	for src := range col {
		col[src] = m.cells[src*m.n+dst]
	}
	return col
}

// Sent returns the bytes rank sends in all (its row's sum).
func (m *Matrix) Sent(rank int) int64 {
	var s int64
	for _, b := range m.Row(rank) {
		s += b
	}
	return s
}

// Received returns the bytes rank receives in all (its column's sum).
func (m *Matrix) Received(rank int) int64 {
	var s int64
	for src := 0; src < m.n; src++ {
		s += m.cells[src*m.n+rank]
	}
	return s
}

// Sub returns the top-left n x n block, as nccl-tests uses a larger file's
// first n rows and columns. It refuses n above the matrix's ranks.
func (m *Matrix) Sub(n int) (*Matrix, error) {
	if n > m.n {
		return nil, fmt.Errorf("traffic matrix: %d ranks, but the matrix has only %d rows", n, m.n)
	}
	s, err := NewMatrix(n)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		copy(s.Row(i), m.Row(i)[:n])
	}
	return s, nil
}

// Equal reports whether m and o have the same ranks and cells.
func (m *Matrix) Equal(o *Matrix) bool {
	if m.n != o.n {
		return false
	}
	for i, c := range m.cells {
		if o.cells[i] != c {
			return false
		}
	}
	return true
}

// WriteTo writes m in nccl-tests' format: one line per sending rank, the
// bytes to each receiving rank separated by one space. ReadFile and Parse
// read it back unchanged when every cell is a multiple of Align.
func (m *Matrix) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	var n int64
	buf := make([]byte, 0, 24)
	for src := 0; src < m.n; src++ {
		for dst, b := range m.Row(src) {
			buf = buf[:0]
			if dst > 0 {
				buf = append(buf, ' ')
			}
			buf = strconv.AppendInt(buf, b, 10)
			k, err := bw.Write(buf)
			n += int64(k)
			if err != nil {
				return n, fmt.Errorf("traffic matrix: write: %w", err)
			}
		}
		if err := bw.WriteByte('\n'); err != nil {
			return n, fmt.Errorf("traffic matrix: write: %w", err)
		}
		n++
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("traffic matrix: write: %w", err)
	}
	return n, nil
}
