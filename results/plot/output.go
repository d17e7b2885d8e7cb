package plot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CheckOutput says what is wrong with writing an image to out after
// reading inputs, before anything is read: an extension other than .png or
// .svg, a directory, a place where no file can be created or a file that
// cannot be written, or an out that is one of the inputs (by the file's
// identity, so that ./in.svg, a hard link or a symbolic link to in.svg
// count too), which Write would replace with the image drawn from it.
func CheckOutput(out string, inputs ...string) error {
	if _, err := imageFormat(out); err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil { // no file yet, or no way to one
		return creatable(out)
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
	if st.Mode().IsRegular() {
		// Opened without truncating: the file stays as it is until the
		// image is drawn. (A FIFO or a device is left to Write, as an
		// open could wait for a reader.)
		f, err := os.OpenFile(out, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("%s: cannot be written: %w", out, pathless(err))
		}
		f.Close()
	}
	return nil
}

// creatable says whether a file out can be created: its directory exists
// and takes a new file, as a scratch file created and removed at once
// shows (whoever the user, on whatever file system).
func creatable(out string) error {
	dir := filepath.Dir(out)
	f, err := os.CreateTemp(dir, ".hccl-test-plot-*")
	if err != nil {
		return fmt.Errorf("%s: cannot be created in %s: %w", out, dir, pathless(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// pathless is err without the path and operation of an *fs.PathError,
// which the message names already.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
