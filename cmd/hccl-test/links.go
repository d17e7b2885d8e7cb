package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// linksCommand is `hccl-test links`.
var linksCommand = command{
	name: "links", args: "DIR", summary: "make all_reduce_perf, all_reduce_test, ... in DIR",
	run: withStdio(runLinks),
}

// linksHelp is `hccl-test links --help` before the names it makes.
const linksHelp = `Makes in DIR a symbolic link to this program under each name of
nccl-tests and hccl_test that runs here, so that scripts and runbooks
that call them run unchanged: all_reduce_perf runs allreduce with
nccl-tests' defaults (one rank per process, both placements, -a 1, -w 1),
all_reduce_test with hccl_test's (64M, -n 20, -w 10), flags on the
command line winning over them. A name that is already such a link is
kept; any other file of one of these names is refused, and then nothing
is made. Prints one line per name.`

// runLinks is `hccl-test links DIR`.
func runLinks(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		names := wrapUsage(strings.Join(programNames(""), " "), screenWidth-2)
		writeCommandHelp(stdout, "links", linksHelp, nil, "Names:\n  "+strings.Join(names, "\n  "))
		return exitOK
	}
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return usageError(stderr, "links", errors.New("want one argument, the directory to make the links in"))
	}
	dir := args[0]
	if st, err := os.Stat(dir); err != nil {
		return usageError(stderr, "links", err)
	} else if !st.IsDir() {
		return usageError(stderr, "links", fmt.Errorf("%s is not a directory", dir))
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s links: finding this program: %s\n", programName, oneLine(err))
		return exitFailed
	}
	names := programNames("")
	// Every name is checked before any link is made: a refusal leaves DIR
	// as it was.
	keep := map[string]bool{}
	for _, name := range names {
		path := filepath.Join(dir, name)
		ok, err := isLinkTo(path, exe)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return usageError(stderr, "links", err)
		case !ok:
			return usageError(stderr, "links", fmt.Errorf("%s exists and is not a link to %s: left alone, and no link made (remove it, or choose another DIR)", path, exe))
		default:
			keep[name] = true
		}
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		if keep[name] {
			fmt.Fprintf(stdout, "%s -> %s (already there)\n", path, exe)
			continue
		}
		if err := os.Symlink(exe, path); err != nil {
			fmt.Fprintf(stderr, "%s links: %s\n", programName, oneLine(err))
			return exitFailed
		}
		fmt.Fprintf(stdout, "%s -> %s\n", path, exe)
	}
	return exitOK
}

// isLinkTo reports whether path is a symbolic link that resolves to exe,
// or an error (fs.ErrNotExist when there is no file of that name).
func isLinkTo(path, exe string) (bool, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	if st.Mode()&fs.ModeSymlink == 0 {
		return false, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false, nil // a dangling link is not one to this program
	}
	return target == exe, nil
}
