package launcher

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxHostName bounds a host name, as DNS does.
const maxHostName = 253

// checkHost checks that host, part of the value v of name, is an IP
// address or a host name: labels of letters, digits, '-' and '_', joined
// by dots, none empty, none starting or ending with '-'.
func checkHost(name, v, host string) error {
	if net.ParseIP(host) != nil {
		return nil
	}
	bad := func(why string) error {
		return &Error{Var: name, Value: v, Why: fmt.Sprintf("%q is not a host name or an IP address: %s", host, why)}
	}
	if host == "" {
		return bad("it is empty")
	}
	if len(host) > maxHostName {
		return bad(fmt.Sprintf("longer than %d bytes", maxHostName))
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if label == "" {
			return bad("an empty label")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return bad(fmt.Sprintf("label %q starts or ends with '-'", label))
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return bad(fmt.Sprintf("%q is not a letter, a digit, '-' or '_'", c))
			}
		}
	}
	return nil
}

// readOpenMPI reads what Open MPI tells the ranks of a job about it: the
// job id, its session directory (which must be an existing directory, not
// a link to one), Open MPI 5's PMIx namespace and the job's key. They are
// read only for a world Open MPI started: elsewhere they are settings of
// Open MPI's, not a rank's.
func readOpenMPI(getenv func(string) string, env *Env) error {
	if getenv("OMPI_COMM_WORLD_RANK") == "" {
		return nil
	}
	j := OpenMPIJob{Job: getenv("OMPI_MCA_ess_base_jobid"), SessionDir: getenv("OMPI_MCA_orte_jobfam_session_dir"),
		Namespace: getenv("PMIX_NAMESPACE"), Key: getenv("OMPI_MCA_orte_precondition_transports")}
	if d := j.SessionDir; d != "" {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			return &Error{Var: "OMPI_MCA_orte_jobfam_session_dir", Value: d, Why: fmt.Sprintf("not a directory of this machine: %v", unwrapPath(err))}
		case !fi.IsDir():
			return &Error{Var: "OMPI_MCA_orte_jobfam_session_dir", Value: d, Why: fmt.Sprintf("it is %s, not a directory", Kind(fi.Mode()))}
		}
	}
	env.OpenMPI = j
	return nil
}

// readPMIFD reads PMI_FD, the descriptor of MPICH's process manager
// connection: a number naming a socket open in this process.
func readPMIFD(getenv func(string) string, env *Env) error {
	v := getenv("PMI_FD")
	if v == "" {
		return nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return &Error{Var: "PMI_FD", Value: v, Why: "want the number of the descriptor mpiexec opened to its process manager (3 or more: 0 to 2 are stdin, stdout and stderr)"}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &Error{Var: "PMI_FD", Value: v, Why: fmt.Sprintf("descriptor %d is not open in this process (%v): the process manager's connection is not there", fd, err)}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return &Error{Var: "PMI_FD", Value: v, Why: fmt.Sprintf("descriptor %d is %s, not the socket to the process manager", fd, Kind(modeOf(st.Mode)))}
	}
	env.PMIFD = fd
	return nil
}

// modeOf is the type bits of a stat mode as an os.FileMode.
func modeOf(m uint32) os.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return os.ModeDir
	case unix.S_IFIFO:
		return os.ModeNamedPipe
	case unix.S_IFLNK:
		return os.ModeSymlink
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	}
	return 0
}

// Kind says in words what type of file mode is: "a regular file", "a
// named pipe (FIFO)", and so on, as messages name a file's type (its mode
// printed as p--------- tells a reader nothing).
func Kind(mode os.FileMode) string {
	switch t := mode.Type(); {
	case t == 0:
		return "a regular file"
	case t&os.ModeDir != 0:
		return "a directory"
	case t&os.ModeSymlink != 0:
		return "a symbolic link"
	case t&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&os.ModeSocket != 0:
		return "a socket"
	case t&os.ModeCharDevice != 0:
		return "a character device"
	case t&os.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// unwrapPath is err without the path an *os.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
