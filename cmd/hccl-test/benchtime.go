package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/internal/limits"
)

// benchtimeValue is --benchtime, as go test's -benchtime: a duration (1s,
// 300ms) or a plain number of seconds, from 0 (off) to limits.MaxDuration;
// Plan.Validate bounds it further (bench.MaxBenchTime). go test's Nx form,
// a fixed count, is -n here, and refused with that said.
type benchtimeValue time.Duration

func (b *benchtimeValue) String() string { return typedDuration(time.Duration(*b)) }
func (b *benchtimeValue) Type() string   { return "duration" }
func (b *benchtimeValue) Set(v string) error {
	t := strings.TrimSpace(v)
	if n, ok := strings.CutSuffix(t, "x"); ok {
		if _, err := strconv.ParseUint(n, 10, 64); err == nil {
			return fmt.Errorf("%q: a fixed count of iterations is -n %s here", v, n)
		}
	}
	d, err := limits.Duration(v, limits.SecondsOrDuration, 0)
	if err != nil {
		return err
	}
	*b = benchtimeValue(d)
	return nil
}
