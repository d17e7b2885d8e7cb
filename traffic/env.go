package traffic

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hccl-test/hccl-test/internal/limits"
)

// The variables of nccl-tests 2.19's alltoallv_perf, read by ReadEnv.
const (
	// EnvMatrixFile names a matrix file; set, it makes the matrix.
	EnvMatrixFile = "NCCL_TESTS_ALLTOALLV_MATRIX_FILE"
	// EnvMatrixScale multiplies every value of the file (default 1).
	EnvMatrixScale = "NCCL_TESTS_ALLTOALLV_MATRIX_SCALE"
	// EnvSpread sets the generated pattern's spread, from 0 (even) to 1
	// (distance-weighted, the default), when no file is named.
	EnvSpread = "NCCL_TESTS_ALLTOALLV_SPREAD"
	// EnvPrintSummary, a non-zero integer, asks for the bytes and
	// bandwidths of every rank after each row.
	EnvPrintSummary = "NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY"
)

// Env is what nccl-tests' variables ask for.
type Env struct {
	// Spec is a File spec when EnvMatrixFile is set (its Scale from
	// EnvMatrixScale), else the Spread spec (its Spread from EnvSpread):
	// the matrix nccl-tests' alltoallv_perf would run.
	Spec Spec
	// Set reports whether EnvMatrixFile, EnvMatrixScale or EnvSpread is
	// set, so a caller can refuse them beside a spec of its own.
	Set bool
	// PrintSummary is EnvPrintSummary's ask for WriteRankSummary.
	PrintSummary bool
}

// ReadEnv reads nccl-tests' alltoallv variables through lookup (os.LookupEnv
// in a program). It gives them nccl-tests' meaning, but where nccl-tests
// silently falls back to a default (a spread or scale that is not a number,
// a negative scale, a spread outside 0 to 1, PRINT_SUMMARY=yes) or ignores
// a variable (SPREAD beside a file, SCALE without one), it refuses: every
// variable set is checked, and an error is one line naming it and its value.
func ReadEnv(lookup func(string) (string, bool)) (Env, error) {
	env := Env{Spec: DefaultSpec(Spread)}
	env.Spec.Tokens = 0
	bad := func(name, v, format string, a ...any) error {
		return fmt.Errorf("%s=%q: %s", name, v, fmt.Sprintf(format, a...))
	}
	file, haveFile := lookup(EnvMatrixFile)
	if haveFile {
		if strings.TrimSpace(file) == "" {
			return Env{}, bad(EnvMatrixFile, file, "names no file: unset it, or name a matrix file")
		}
		env.Spec = DefaultSpec(File)
		env.Spec.Path = file
		env.Set = true
	}
	if v, ok := lookup(EnvMatrixScale); ok {
		if !haveFile {
			return Env{}, bad(EnvMatrixScale, v, "scales a matrix file, but %s is not set", EnvMatrixFile)
		}
		x, err := number(strings.TrimSpace(v), 0, MaxScale)
		if err != nil {
			return Env{}, bad(EnvMatrixScale, v, "%v", err)
		}
		env.Spec.Scale = x
	}
	if v, ok := lookup(EnvSpread); ok {
		if haveFile {
			return Env{}, bad(EnvSpread, v, "shapes the generated pattern, which %s replaces: unset one", EnvMatrixFile)
		}
		x, err := fraction(strings.TrimSpace(v))
		if err != nil {
			return Env{}, bad(EnvSpread, v, "%v", err)
		}
		env.Spec.Spread = x
		env.Set = true
	}
	if v, ok := lookup(EnvPrintSummary); ok {
		n, err := limits.Count(v)
		if err != nil {
			if errors.Is(err, limits.ErrRange) {
				return Env{}, bad(EnvPrintSummary, v, "want 0 or 1")
			}
			return Env{}, bad(EnvPrintSummary, v, "not a whole number: want 0 or 1 (any non-zero prints)")
		}
		env.PrintSummary = n != 0
	}
	return env, nil
}
