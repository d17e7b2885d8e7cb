package outfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
)

// ID is the identity of a file that an output names, whatever the
// spelling (x, ./x, a symbolic link to it, /dev/stdout for the file behind
// stdout), and whether or not the file exists yet: an existing file's own
// (its device and inode, as os.SameFile compares them), or else the
// directory that creating it would put it in and its name there.
type ID struct {
	file os.FileInfo // the file, if it exists
	dir  os.FileInfo // else its directory
	name string      // and its name in that directory
}

// maxLinks is how many symbolic links Identify follows, as the kernel's
// 40 before ELOOP.
const maxLinks = 40

// Identify returns the identity of the file at path, as opening it for
// writing would find or create it.
func Identify(path string) (ID, error) {
	for range maxLinks {
		fi, err := os.Stat(path)
		if err == nil {
			return ID{file: fi}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return ID{}, err
		}
		dir, name := splitPath(path)
		// A symbolic link to a file that does not exist yet names the file
		// that opening the link creates.
		if target, err := os.Readlink(path); err == nil {
			if !strings.HasPrefix(target, "/") {
				target = dir + "/" + target // not Clean'd: dir/.. is the kernel's to resolve
			}
			path = target
			continue
		}
		di, err := os.Stat(dir)
		if err != nil {
			return ID{}, err
		}
		return ID{dir: di, name: name}, nil
	}
	return ID{}, &fs.PathError{Op: "open", Path: path, Err: errors.New("too many levels of symbolic links")}
}

// splitPath splits path into its directory, as the kernel resolves it,
// and its last element.
func splitPath(path string) (dir, name string) {
	i := strings.LastIndexByte(path, '/')
	switch {
	case i < 0:
		return ".", path
	case i == 0:
		return "/", path[1:]
	}
	return path[:i], path[i+1:]
}

// Same reports whether a and b are one file.
func (a ID) Same(b ID) bool {
	switch {
	case a.file != nil && b.file != nil:
		return os.SameFile(a.file, b.file)
	case a.file != nil || b.file != nil:
		return false // one exists, the other does not
	case a.dir == nil || b.dir == nil:
		return false // unknown
	}
	return os.SameFile(a.dir, b.dir) && a.name == b.name
}

// KeepsNothing reports whether the file is /dev/null: outputs can share it
// without spoiling each other.
func (a ID) KeepsNothing() bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && a.file != nil && os.SameFile(a.file, null)
}

// Exists reports whether the file was there when it was identified (an
// output's file that does not exist yet has only a directory and a name).
func (a ID) Exists() bool { return a.file != nil }

// IdentifyWriter returns the identity of w's file, if w is a file (the
// zero ID, which is the same as no other, if not).
func IdentifyWriter(w io.Writer) ID {
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil {
			return ID{file: fi}
		}
	}
	return ID{}
}
