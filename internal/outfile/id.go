package main

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// fileID is the identity of a file that an output names, whatever the
// spelling (x, ./x, a symbolic link to it, /dev/stdout for the file behind
// stdout), and whether or not the file exists yet: an existing file's own
// (its device and inode, as os.SameFile compares them), or else the
// directory that creating it would put it in and its name there.
type fileID struct {
	file os.FileInfo // the file, if it exists
	dir  os.FileInfo // else its directory
	name string      // and its name in that directory
}

// maxLinks is how many symbolic links identify follows, as the kernel's
// 40 before ELOOP.
const maxLinks = 40

// identify returns the identity of the file at path, as opening it for
// writing would find or create it.
func identify(path string) (fileID, error) {
	for range maxLinks {
		fi, err := os.Stat(path)
		if err == nil {
			return fileID{file: fi}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fileID{}, err
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
			return fileID{}, err
		}
		return fileID{dir: di, name: name}, nil
	}
	return fileID{}, &fs.PathError{Op: "open", Path: path, Err: errors.New("too many levels of symbolic links")}
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

// same reports whether a and b are one file.
func (a fileID) same(b fileID) bool {
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

// keepsNothing reports whether the file is /dev/null: outputs can share it
// without spoiling each other.
func (a fileID) keepsNothing() bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && a.file != nil && os.SameFile(a.file, null)
}
