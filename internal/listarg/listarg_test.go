package listarg

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	atoi := func(s string) (int, error) { return strconv.Atoi(s) }
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"1,4,16", []int{1, 4, 16}, ""},
		{" 1 , 4 ", []int{1, 4}, ""},
		{"1,1", nil, `--fusion "1,1": 1 is listed twice`},
		{"1,01", nil, `--fusion "1,01": 01 is listed twice (as 1 and as 01)`},
		{"1,,4", nil, `--fusion "1,,4": an empty name at item 2 of 3`},
		{"1,", nil, `--fusion "1,": an empty name at item 2 of 2`},
		{",1", nil, `--fusion ",1": an empty name at item 1 of 2`},
		{"", nil, `--fusion "": an empty list`},
		{"x", nil, `--fusion: strconv.Atoi`},
	} {
		got, err := Parse("--fusion", tc.in, ",", atoi)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%q) = %v, %v; want error %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("Parse(%q) = %v; want %v", tc.in, got, tc.want)
			}
		}
	}
}

func TestParseByWrapsParseErrors(t *testing.T) {
	bad := errors.New("bad item")
	_, err := ParseBy("--x", "a", ",", func(string) (string, error) { return "", bad }, func(s string) string { return s })
	if !errors.Is(err, bad) {
		t.Errorf("got %v, want it to wrap %v", err, bad)
	}
}

func TestKeys(t *testing.T) {
	for _, tc := range []struct {
		in, wantErr string
		keys        []string
	}{
		{"servers=2,per-server=4", "", []string{"servers", "per-server"}},
		{"Servers=2,servers=4", `--topology "Servers=2,servers=4": servers given twice`, nil},
		{"servers=2,", `--topology "servers=2,": an empty name at item 2 of 2`, nil},
		{"servers", "", []string{"servers"}},
	} {
		keys, _, err := Keys("--topology", tc.in, ",", "=", strings.ToLower)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("Keys(%q): got %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(keys, " ") != strings.Join(tc.keys, " ") {
			t.Errorf("Keys(%q) = %v, %v; want %v", tc.in, keys, err, tc.keys)
		}
	}
}
