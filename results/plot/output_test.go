package plot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckOutput refuses an image format plot cannot write and an output
// that is one of the inputs however it is spelled or linked.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.svg")
	other := filepath.Join(dir, "other.csv")
	for _, p := range []string{in, other} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hard, soft := filepath.Join(dir, "hard.svg"), filepath.Join(dir, "soft.svg")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(in, soft); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		out     string
		inputs  []string
		wantErr string // "" for none
	}{
		{"gif", filepath.Join(dir, "x.gif"), []string{other}, `x.gif: unknown image format ".gif": want .png or .svg`},
		{"no extension", filepath.Join(dir, "plot"), []string{other}, `unknown image format ""`},
		{"the input itself", in, []string{other, in}, in + ": is also an input: the image would replace it"},
		{"another spelling", dir + "/./in.svg", []string{in}, "./in.svg: is the input " + in},
		{"a hard link", hard, []string{in}, "hard.svg: is the input " + in},
		{"a symbolic link", soft, []string{in}, "soft.svg: is the input " + in},
		{"a directory", mkdir(t, filepath.Join(dir, "d.png")), []string{other}, "d.png: is a directory, not an image file"},
		{"a new file", filepath.Join(dir, "new.png"), []string{in, other}, ""},
		{"no such directory", filepath.Join(dir, "none", "x.png"), []string{other}, "x.png: cannot be created in " + filepath.Join(dir, "none") + ": no such file or directory"},
		{"under a file", filepath.Join(other, "x.png"), []string{in}, "x.png: cannot be created in " + other + ": not a directory"},
		{"in /proc", "/proc/x.png", []string{other}, "/proc/x.png: cannot be created in /proc"},
		{"an existing other file", filepath.Join(dir, "in.svg"), []string{other}, ""},
		{"upper-case extension", filepath.Join(dir, "NEW.PNG"), []string{other}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOutput(tc.out, tc.inputs...)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// mkdir makes the directory path and returns it.
func mkdir(t *testing.T, path string) string {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
