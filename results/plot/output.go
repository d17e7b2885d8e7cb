package plot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckOutput says what is wrong with writing an image to out after
// reading inputs, before anything is read: an extension other than .png or
// .svg, a directory, or an out that is one of the inputs (by the file's
// identity, so that ./in.svg, a hard link or a symbolic link to in.svg
// count too), which Write would replace with the image drawn from it.
func CheckOutput(out string, inputs ...string) error {
	if _, err := imageFormat(out); err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return nil // no file yet, or one Write will say it cannot create
	}
	if st.IsDir() {
		return fmt.Errorf("%s: is a directory, not an image file", out)
	}
	for _, in := range inputs {
		if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
			if in == out {
				return fmt.Errorf("%s: is also an input: the image would replace it", out)
			}
			return fmt.Errorf("%s: is the input %s: the image would replace it", out, in)
		}
	}
	return nil
}

// imageFormat returns the image format that out's extension names: ".png"
// or ".svg".
func imageFormat(out string) (string, error) {
	ext := strings.ToLower(filepath.Ext(out))
	if ext != ".png" && ext != ".svg" {
		return "", fmt.Errorf("%s: unknown image format %q: want .png or .svg", out, ext)
	}
	return ext, nil
}
