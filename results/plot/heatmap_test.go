package plot

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteHeatmap(t *testing.T) {
	nan := math.NaN()
	h := &Heatmap{Title: "sendrecv busbw", Labels: []string{"a", "b", "c"}, Floor: 0.8,
		Value: [][]float64{{nan, 20, 6}, {20, nan, nan}, {6, nan, nan}},
		Ratio: [][]float64{{nan, 1, 0.3}, {1, nan, nan}, {0.3, nan, nan}},
		Mark:  [][]string{{"", "", ""}, {"", "", "FAIL"}, {"", "FAIL", ""}}}
	dir := t.TempDir()
	for _, tc := range []struct{ name, magic string }{{"h.png", "\x89PNG"}, {"h.svg", "<svg"}} {
		out := filepath.Join(dir, tc.name)
		if err := WriteHeatmap(h, out); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil || !bytes.Contains(data[:min(len(data), 200)], []byte(tc.magic)) {
			t.Errorf("%s: %v, starts %q", tc.name, err, data[:min(len(data), 20)])
		}
		if tc.name == "h.svg" && (!bytes.Contains(data, []byte("FAIL")) || !bytes.Contains(data, []byte(">20<"))) {
			t.Errorf("the SVG lacks the FAIL mark or the value 20")
		}
	}
	if err := WriteHeatmap(h, filepath.Join(dir, "h.gif")); err == nil || !strings.Contains(err.Error(), "unknown image format") {
		t.Errorf(".gif: %v", err)
	}
	if err := WriteHeatmap(&Heatmap{}, filepath.Join(dir, "e.png")); !errors.Is(err, ErrNoData) {
		t.Errorf("no labels: %v, want ErrNoData", err)
	}
}

func TestRatioColor(t *testing.T) {
	for _, tc := range []struct {
		r    float64
		want any
	}{{0, palette[1]}, {0.8, palette[7]}, {1, palette[2]}, {3, palette[2]}} {
		if got := ratioColor(tc.r, 0.8); got != tc.want {
			t.Errorf("ratioColor(%v) = %v, want %v", tc.r, got, tc.want)
		}
	}
}
