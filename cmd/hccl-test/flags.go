package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/internal/listarg"
)

// sizeValue is a pflag.Value for byte sizes with K/M/G suffixes.
type sizeValue int64

func (s *sizeValue) String() string { return strconv.FormatInt(int64(*s), 10) }
func (s *sizeValue) Type() string   { return "bytes" }
func (s *sizeValue) Set(v string) error {
	n, err := bench.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeValue(n)
	return nil
}

// durationValue is a pflag.Value for a time limit: a Go duration (90s,
// 2m) or a plain number of seconds, as nccl-tests' -T takes it.
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }
func (d *durationValue) Type() string   { return "duration" }
func (d *durationValue) Set(v string) error {
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		*d = durationValue(time.Duration(secs * float64(time.Second)))
		return nil
	}
	t, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is neither seconds nor a duration such as 90s or 2m", v)
	}
	*d = durationValue(t)
	return nil
}

// splitList reads a comma-separated flag value by listarg's rule (no
// empty item, no item twice); "all" expands to every name all returns.
func splitList[T comparable](flag, v string, all func() []T, parse func(string) (T, error)) ([]T, error) {
	if strings.EqualFold(strings.TrimSpace(v), "all") {
		return all(), nil
	}
	return listarg.Parse("--"+flag, v, ",", parse)
}

// normalize makes `_` and `-` interchangeable in long flag names, so
// --warmup_iters and --warmup-iters are the same flag.
func normalize(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
}
