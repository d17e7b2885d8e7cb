package backends

import (
	"fmt"
	"strconv"
)

// LauncherVars names the environment variables through which a launcher
// (mpirun, srun, torchrun) tells a process its rank and the world size.
type LauncherVars struct {
	Rank, Size string
	Name       string // the launcher, for Launch.Source
}

// FindLaunch returns the world described by the first of vars, in order,
// whose two variables getenv has, and whether one did. Values that are not
// a rank within a world size are an error naming the launcher and values.
func FindLaunch(getenv func(string) string, vars []LauncherVars) (Launch, bool, error) {
	for _, l := range vars {
		rs, ss := getenv(l.Rank), getenv(l.Size)
		if rs == "" || ss == "" {
			continue
		}
		src := fmt.Sprintf("%s (%s=%s %s=%s)", l.Name, l.Rank, rs, l.Size, ss)
		rank, err1 := strconv.Atoi(rs)
		size, err2 := strconv.Atoi(ss)
		if err1 != nil || err2 != nil || size < 1 || rank < 0 || rank >= size {
			return Launch{}, true, fmt.Errorf("started by %s: not a valid rank and world size", src)
		}
		return Launch{Rank: rank, Size: size, Source: src}, true, nil
	}
	return Launch{}, false, nil
}
