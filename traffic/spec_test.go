package traffic

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // String of the parsed spec
	}{
		{"zipf:s=1.2,tokens=4096,hidden=14336,experts=64,topk=8,seed=3",
			"zipf:s=1.2,tokens=4096,hidden=14336,experts=64,topk=8,seed=3,draw=iter,place=block"},
		{"uniform", "uniform:tokens=4096,hidden=8192,experts=0,topk=1,seed=1,draw=iter,place=block"},
		{"Hot: hot=2 , share=0.9, hidden=7K, draw=FIXED, place=cyclic",
			"hot:hot=2,share=0.9,tokens=4096,hidden=7168,experts=0,topk=1,seed=1,draw=fixed,place=cyclic"},
		{"spread", "spread:spread=1,bytes=0"},
		{"spread:spread=0.25,bytes=1M", "spread:spread=0.25,bytes=1048576"},
		{"file:/data/m,a:b.txt", "file:/data/m,a:b.txt"},
		{"zipf:tokens=0,seed=18446744073709551615", "zipf:s=1,tokens=0,hidden=8192,experts=0,topk=1,seed=18446744073709551615,draw=iter,place=block"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			sp, err := ParseSpec(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := sp.String(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			back, err := ParseSpec(sp.String())
			if err != nil || back != sp {
				t.Errorf("String does not read back: %+v, %v", back, err)
			}
		})
	}
}

func TestParseSpecRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `unknown kind ""`},
		{"poisson:l=1", `unknown kind "poisson"`},
		{"file:", "names no file"},
		{"file: ", "names no file"},
		{"zipf:", "an empty list"},
		{"zipf:s=1,,seed=2", "an empty name at item 2 of 3"},
		{"zipf:s=1,s=2", "s given twice"},
		{"zipf:S=1,s=2", "s given twice"},
		{"zipf:hot=1", `zipf takes no key "hot"`},
		{"spread:tokens=4", `spread takes no key "tokens"`},
		{"zipf:s", "s=: not a number"},
		{"zipf:s=NaN", "not a finite number"},
		{"zipf:s=-Inf", "not a finite number"},
		{"zipf:s=-0.5", "want a number from 0 to 100"},
		{"zipf:s=101", "want a number from 0 to 100"},
		{"zipf:s=1e999", "not a finite number"},
		{"hot:share=1.5", "want a number from 0 to 1"},
		{"hot:share=inf", "not a finite number"},
		{"spread:spread=-0.1", "want a number from 0 to 1"},
		{"uniform:hidden=100", "positive multiple of 16"},
		{"uniform:hidden=0", "positive multiple of 16"},
		{"uniform:hidden=2G", "want a size from 0 to 1073741824"},
		{"uniform:hidden=-16", "want a size"},
		{"uniform:hidden=lots", "not a size"},
		{"uniform:tokens=-1", "want a whole number from 0 to 268435456"},
		{"uniform:tokens=1.5", "not a whole number"},
		{"uniform:tokens=300000000", "want a whole number from 0 to 268435456"},
		{"uniform:tokens=99999999999999999999", "want a whole number"},
		{"uniform:experts=2000000", "want a whole number from 0 to 1048576"},
		{"uniform:topk=0", "want a whole number from 1 to 256"},
		{"uniform:topk=257", "want a whole number from 1 to 256"},
		{"uniform:seed=-1", "want a whole number from 0 to 2^64-1"},
		{"uniform:seed=18446744073709551616", "want a whole number from 0 to 2^64-1"},
		{"uniform:draw=step", "want iter or fixed"},
		{"uniform:place=random", "want block or cyclic"},
		{"spread:bytes=100T", "want a size from 0 to 70368744177664"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseSpec(tc.in)
			if err == nil {
				t.Fatalf("accepted %q", tc.in)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "traffic ") {
				t.Errorf("error %q: want one line with %q", msg, tc.want)
			}
		})
	}
}

func TestValidateRefuses(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		ranks int
		want  string
	}{
		{"uniform", 0, "0 ranks: want 1 to 65536"},
		{"spread", MaxRanks + 1, "65537 ranks"},
		{"uniform:topk=8", 4, "top-8 of 4 experts that can be chosen"},
		{"hot:hot=4", 4, "4 hot experts of 4"},
		{"hot:hot=2,share=1,experts=16,topk=3", 4, "top-3 of 2 experts that can be chosen"},
		{"hot:hot=2,share=0,experts=4,topk=3", 4, "top-3 of 2 experts"},
		{"zipf:s=2,experts=3,topk=4", 8, "top-4 of 3 experts"},
		{"uniform:tokens=268435456,topk=2", 4, "more than the limit of 268435456 draws"},
		{"uniform:tokens=268435456,hidden=1G", 4, "more than the limit of 70368744177664"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			sp, err := ParseSpec(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if _, err = NewGenerator(sp, tc.ranks); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewGenerator(%d ranks): %v, want %q", tc.ranks, err, tc.want)
			}
		})
	}
}

func TestFileSpec(t *testing.T) {
	path := t.TempDir() + "/m.txt"
	m := rows(3, 16, 32, 48, 64, 80, 96, 112, 128, 144)
	writeMatrix(t, path, m)
	sp, err := ParseSpec("file:" + path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(sp, 2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Matrix(5, 12345)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(rows(2, 16, 32, 64, 80)) || !g.Fixed() || g.Sized() {
		t.Errorf("first 2 ranks of the file: %v", got.cells)
	}
	if _, err := NewGenerator(sp, 4); err == nil || !strings.Contains(err.Error(), "3 rows, fewer than the 4 ranks") {
		t.Errorf("4 ranks on a 3-row file: %v", err)
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"zipf:s=1.2,tokens=4096,hidden=14336,experts=64,topk=8,seed=3", "hot:hot=2,share=0.9",
		"spread:spread=0.5", "file:m.txt", "uniform:draw=fixed,place=cyclic", "zipf:s=1,,", "hot:share=NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		back, err := ParseSpec(sp.String())
		if err != nil || back != sp {
			t.Fatalf("%q reads back from %q as %+v, %v", s, sp.String(), back, err)
		}
		if sp.Kind != File {
			if g, err := NewGenerator(sp, 3); err == nil && sp.Tokens*int64(sp.TopK) <= 1<<12 {
				if _, err := g.Matrix(1, 1<<16); err != nil && !strings.Contains(err.Error(), "draws a rank") {
					t.Fatalf("%s: %v", sp, err)
				}
			}
		}
	})
}
