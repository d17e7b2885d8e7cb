package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/listarg"
	"github.com/hccl-test/hccl-test/units"
)

// sizeValue is a pflag.Value for byte sizes with K/M/G suffixes.
type sizeValue int64

// String gives the size as a user types it, so that --help shows the
// default as 32M rather than 33554432.
func (s *sizeValue) String() string { return typedSize(int64(*s)) }

// typedSize writes n with the largest binary suffix (K, M, G, T) that
// divides it exactly, as limits.Size reads it back: 32M, 1536K, 1000.
func typedSize(n int64) string {
	for _, u := range []struct {
		suffix string
		bytes  int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n != 0 && n%u.bytes == 0 {
			return strconv.FormatInt(n/u.bytes, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
func (s *sizeValue) Type() string { return "bytes" }
func (s *sizeValue) Set(v string) error {
	n, err := units.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeValue(n)
	return nil
}

// countValue is a pflag.Value for a whole number such as -n or -p, read by
// limits.Count (pflag's own calls 99999999999999999999 "not an integer");
// each flag's own limits are checked with the plan.
type countValue int

// newCount sets *p to v and returns *p as a countValue.
func newCount(p *int, v int) *countValue {
	*p = v
	return (*countValue)(p)
}

func (c *countValue) String() string { return strconv.Itoa(int(*c)) }
func (c *countValue) Type() string   { return "int" }
func (c *countValue) Set(s string) error {
	n, err := limits.Count(s)
	if err != nil {
		return err
	}
	*c = countValue(n)
	return nil
}

// durationValue is a pflag.Value for a time limit: a Go duration (90s,
// 2m) or a plain number of seconds, as nccl-tests' -T takes it, from 0 to
// limits.MaxDuration (Plan.Validate refuses 0 where it means nothing).
type durationValue time.Duration

// String gives the duration as a user types it: 2m rather than Go's 2m0s,
// and 0 for none (which --help then leaves out, as it does every zero
// default).
func (d *durationValue) String() string { return typedDuration(time.Duration(*d)) }

// typedDuration is time.Duration's String without its zero minutes and
// seconds: 2m, 1h30m, 90ms, 0.
func typedDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
func (d *durationValue) Type() string { return "duration" }
func (d *durationValue) Set(v string) error {
	t, err := limits.Duration(v, limits.SecondsOrDuration, 0)
	if err != nil {
		return err
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
	for _, part := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(part), "all") {
			return nil, fmt.Errorf("--%s %q: \"all\" cannot be combined with other names", flag, v)
		}
	}
	return listarg.Parse("--"+flag, v, ",", parse)
}

// normalize makes `_` and `-` interchangeable in long flag names, so
// --warmup_iters and --warmup-iters are the same flag.
func normalize(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
}
