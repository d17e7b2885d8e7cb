package traffic

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func rows(n int, cells ...int64) *Matrix {
	m, err := NewMatrix(n)
	if err != nil {
		panic(err)
	}
	copy(m.cells, cells)
	return m
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		scale float64
		want  *Matrix
	}{
		// The example of nccl-tests' src/alltoallv.cu, each cell aligned
		// down to 16 bytes.
		{"nccl-tests example", "100  200  150\n50   100  75\n300  150  200\n", 1,
			rows(3, 96, 192, 144, 48, 96, 64, 288, 144, 192)},
		{"one rank", "4096", 1, rows(1, 4096)},
		{"blank lines, tabs, CRLF, no last newline", "\n16\t32\r\n\n  48 64", 1, rows(2, 16, 32, 48, 64)},
		{"exponents and zero fractions", "1e3 1.5e3\n2048.0 +0\n", 1, rows(2, 992, 1488, 2048, 0)},
		{"negative zero", "-0 16\n16 16", 1, rows(2, 0, 16, 16, 16)},
		{"scale 2", "100 8\n8 100", 2, rows(2, 192, 16, 16, 192)},
		{"scale 0.5 truncates then aligns", "33 100\n64 31", 0.5, rows(2, 16, 48, 32, 0)},
		{"scale 0", "4096 4096\n4096 4096", 0, rows(2, 0, 0, 0, 0)},
		// 3 x 0.1 is 0.30000000000000004 in double precision, so a cell
		// of 160 scaled by 0.1 is 16 whichever precision: the alignment
		// hides the rounding nccl-tests' long double would do.
		{"scale 0.1", "160 0\n0 320", 0.1, rows(2, 16, 0, 0, 32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tc.text), "m.txt", tc.scale)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) {
				t.Errorf("got %v, want %v", got.cells, tc.want.cells)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		scale      float64
		want       string
	}{
		{"empty", "", 1, "empty"},
		{"only white space", " \n\t\n", 1, "empty"},
		{"short row", "16 16\n16\n", 1, "line 2: 1 values, but the first row has 2"},
		{"long row", "16 16\n16 16 16\n", 1, "line 2: 3 values"},
		{"more rows than columns", "16 16\n16 16\n16 16\n", 1, "line 3: row 3"},
		{"fewer rows than columns", "16 16 16\n16 16 16\n", 1, "2 rows of 3 columns"},
		{"negative", "16 -16\n16 16", 1, `column 2: "-16": negative bytes`},
		{"negative tiny", "16 -1e-400\n16 16", 1, "negative"},
		{"fraction", "16.5 16\n16 16", 1, `line 1, column 1: "16.5": a fraction`},
		{"underflow", "1e-400", 1, "a fraction"},
		{"NaN", "nan 16\n16 16", 1, "not a finite number"},
		{"Inf", "16 16\n16 +Inf", 1, "line 2, column 2: \"+Inf\": not a finite number"},
		{"hex", "0x10", 1, "not a decimal number"},
		{"underscore", "1_000", 1, "not a decimal number"},
		{"word", "16 sixteen\n16 16", 1, "not a decimal number"},
		{"comma", "16,16\n16 16", 1, "not a decimal number"},
		{"fraction that rounds to whole", "70000000000000.0000001", 1, "a fraction"},
		{"fraction with exponent", "1.25e1", 1, "a fraction"},
		{"huge negative exponent", "1e-99999999999", 1, "a fraction"},
		{"over the limit", "1e15", 1, "more than the limit"},
		{"overflow", "1e400", 1, "more than the limit"},
		{"row over the limit", "4e13 4e13\n0 0", 1, "line 1: the row sends more than the limit"},
		{"scaled over the limit", "1e12", 1e3, "scaled by 1000"},
		{"negative scale", "16", -1, "scale -1"},
		{"NaN scale", "16", nan(), "scale NaN"},
		{"too wide", strings.Repeat("0 ", maxDense()+1), 1, "more than the 4096 ranks"},
		{"line too long", strings.Repeat(" ", MaxLineBytes+1) + "16", 1, "line 1: longer than the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.text), "m.txt", tc.scale)
			if err == nil {
				t.Fatalf("accepted %q", tc.text)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "traffic matrix m.txt: ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the file with %q", msg, tc.want)
			}
		})
	}
}

func nan() float64 { z := 0.0; return z / z }

func TestFileRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 8, 17, 64} {
		m, err := NewMatrix(n)
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.cells {
			switch rng.IntN(3) {
			case 0: // a zero-size pair
			case 1:
				m.cells[i] = Align * rng.Int64N(1<<20)
			default:
				m.cells[i] = Align * rng.Int64N(MaxRankBytes/Align/int64(n))
			}
		}
		var buf bytes.Buffer
		if _, err := m.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "m.txt")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path, 1)
		if err != nil {
			t.Fatalf("%d ranks: %v", n, err)
		}
		if !got.Equal(m) {
			t.Errorf("%d ranks: read back a different matrix", n)
		}
	}
}

func writeMatrix(t *testing.T, path string, m *Matrix) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSub(t *testing.T) {
	m := rows(3, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	s, err := m.Sub(2)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Equal(rows(2, 1, 2, 4, 5)) {
		t.Errorf("Sub(2) = %v", s.cells)
	}
	if col := m.Column(1); col[0] != 2 || col[1] != 5 || col[2] != 8 || m.Received(1) != 15 || m.Sent(1) != 15 {
		t.Errorf("column 1 %v, received %d, sent by 1 %d", col, m.Received(1), m.Sent(1))
	}
	if _, err := m.Sub(4); err == nil || !strings.Contains(err.Error(), "4 ranks, but the matrix has only 3 rows") {
		t.Errorf("Sub(4): %v", err)
	}
}

func TestNewMatrixLimits(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "want at least 1"},
		{4097, "more than the 16777216 a whole matrix may hold"},
		{MaxRanks + 1, "more than the limit of 65536"},
	} {
		if _, err := NewMatrix(tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewMatrix(%d): %v, want %q", tc.n, err, tc.want)
		}
	}
	if _, err := NewMatrix(4096); err != nil {
		t.Errorf("NewMatrix(4096): %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"16", "100 200\n300 400\n", "1e3 -1\n2 3", "nan", "\n\n", "0x10 1\n1 1"} {
		f.Add(s, 1.0)
	}
	f.Fuzz(func(t *testing.T, text string, scale float64) {
		m, err := Parse(strings.NewReader(text), "f", scale)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		var buf bytes.Buffer
		if _, err := m.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := Parse(&buf, "f", 1)
		if err != nil || !back.Equal(m) {
			t.Fatalf("round trip of %q: %v", text, err)
		}
		for _, c := range m.cells {
			if c < 0 || c%Align != 0 {
				t.Fatalf("cell %d of %q", c, text)
			}
		}
	})
}

// A public matrix (see testdata/README.md), its figures worked out by hand
// from its values aligned down to 16 bytes.
func TestPublicMatrix(t *testing.T) {
	m, err := ReadFile("testdata/transfer_matrix_8", 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Ranks() != 8 || m.At(0, 1) != 39680 || m.At(7, 5) != 10048 || m.At(3, 3) != 0 {
		t.Fatalf("read %d ranks, [0][1] %d, [7][5] %d", m.Ranks(), m.At(0, 1), m.At(7, 5))
	}
	s := Summarize(m)
	if s.HotRank != 3 || s.RecvMax != 210352 || s.RecvMin != 160944 || s.SentMin != 163024 ||
		s.SentMax != 232448 || s.Total != 1542752 || s.MaxBytes != 232448 || math.Abs(s.Imbalance-1.0907884) > 1e-6 {
		t.Errorf("summary %+v", s)
	}
}
