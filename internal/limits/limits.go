// Package limits parses the numbers a user gives (flags, environment
// variables, fields of input files, --inject clauses) into durations,
// sizes and rates, each within documented limits: no NaN, no infinity, no
// value that overflows the type it becomes or the arithmetic done with it
// later. Every parser of a user's number goes through this package, so one
// set of limits holds everywhere.
//
// Errors name the value and the limit but not where the value came from;
// the caller adds that ("--timeout", "HCCL_EXEC_TIMEOUT=...").
package limits

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxDuration is the longest duration a user may give: a week. Longer
// limits, delays or latencies mean a typo, and sums of durations of this
// size stay far from time.Duration's overflow at about 292 years.
const MaxDuration = 7 * 24 * time.Hour

// MaxSize is the largest byte count a user may give (1 PiB): far beyond any
// machine's memory, and small enough that size arithmetic never overflows.
const MaxSize = 1 << 50

// MinRate and MaxRate bound a rate in bytes per second: from 1 B/s (a
// message of MaxSize bytes then takes about 36 years, still a
// time.Duration) to 1 PB/s, a thousand times the fastest link of today.
const (
	MinRate = 1.0
	MaxRate = 1e15
	// RateRange says the limits in the units Rate reads.
	RateRange = "1B/s to 1000TB/s"
)

// ErrRange is what errors.Is finds in an error for a well-spelled value
// outside its limits; other errors are misspellings.
var ErrRange = errors.New("value out of range")

type rangeError struct{ msg string }

func (e rangeError) Error() string        { return e.msg }
func (e rangeError) Is(target error) bool { return target == ErrRange }

func outOfRange(format string, a ...any) error { return rangeError{fmt.Sprintf(format, a...)} }

// Form says which spellings a duration may take.
type Form uint8

// The spellings of a duration.
const (
	// GoDuration is time.ParseDuration's form: 200us, 1.5s, 2h45m.
	GoDuration Form = iota
	// SecondsOrDuration is a plain number of seconds (90, 0.5) or a Go
	// duration, as nccl-tests' -T takes it.
	SecondsOrDuration
	// Seconds is a plain number of seconds only, as HCCL's environment
	// variables take it.
	Seconds
)

// Duration parses s in form f and checks that min <= d <= MaxDuration.
// min is 0 where zero means something (no delay) and the least useful
// value otherwise (1ns for "positive").
func Duration(s string, f Form, min time.Duration) (time.Duration, error) {
	t := strings.TrimSpace(s)
	var d time.Duration
	secs, ferr := strconv.ParseFloat(t, 64)
	switch {
	case (ferr == nil || errors.Is(ferr, strconv.ErrRange)) && f != GoDuration:
		// A float's range is far wider than a Duration's: check before
		// converting, or 99999999999 seconds wraps to a negative time.
		if math.IsNaN(secs) {
			return 0, fmt.Errorf("%q is not a number of seconds", s)
		}
		if secs > MaxDuration.Seconds() {
			return 0, outOfRange("%q seconds: more than the limit of %v", s, MaxDuration)
		}
		if secs < 0 {
			return 0, outOfRange("%q seconds: must not be negative", s)
		}
		d = time.Duration(secs * float64(time.Second))
		if secs > 0 && d == 0 {
			return 0, outOfRange("%q seconds: shorter than 1ns", s)
		}
	case f == Seconds:
		return 0, fmt.Errorf("%q: want a number of seconds", s)
	default:
		var err error
		if d, err = time.ParseDuration(t); err != nil {
			if durationShape.MatchString(t) && !strings.HasPrefix(t, "-") {
				// Spelled right, so time.ParseDuration overflowed.
				return 0, outOfRange("%q: more than the limit of %v", s, MaxDuration)
			}
			return 0, durationSpelling(s, f)
		}
		if d > MaxDuration {
			return 0, outOfRange("%v: more than the limit of %v", d, MaxDuration)
		}
		if d < 0 {
			return 0, outOfRange("%v: must not be negative", d)
		}
	}
	if d < min {
		if min == 1 {
			return 0, outOfRange("%v: want a positive duration", d)
		}
		return 0, outOfRange("%v: shorter than the least useful %v", d, min)
	}
	return d, nil
}

// durationShape matches what time.ParseDuration reads, whatever the size.
var durationShape = regexp.MustCompile(`^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

func durationSpelling(s string, f Form) error {
	if f == GoDuration {
		return fmt.Errorf("%q is not a duration such as 2us or 10us", s)
	}
	return fmt.Errorf("%q is neither seconds nor a duration such as 90s or 2m", s)
}

// Size parses a byte count with an optional binary suffix, as nccl-tests
// and hccl_test accept it: 8, 1024, 4K, 1.5M, 1G, 2T (K = 1024; KB, KiB and
// lower case are accepted too), from 0 to MaxSize. A fractional result is
// rounded down to a whole byte.
func Size(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num, mult := t, 1.0
	lower := strings.ToLower(t)
	for _, suf := range []struct {
		text string
		mult float64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
		{"b", 1},
	} {
		if strings.HasSuffix(lower, suf.text) {
			num, mult = strings.TrimSpace(t[:len(t)-len(suf.text)]), suf.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" || strings.ContainsAny(num, "xXpP_") || math.IsNaN(v) {
		return 0, fmt.Errorf("size %q: not a number with an optional K/M/G/T suffix", s)
	}
	v *= mult
	switch {
	case v < 0:
		return 0, outOfRange("size %q: must not be negative", s)
	case v > MaxSize:
		return 0, outOfRange("size %q: larger than the limit of %d bytes", s, int64(MaxSize))
	}
	return int64(v), nil
}

// Rate parses a rate with units into bytes per second and checks it is
// within [MinRate, MaxRate]: 64GB/s, 25 GB/s, 200Gbit/s, 200Gb/s, 100Gbps,
// 12.5GiB/s, 800MB/s, 10KB/s, 1.2TB/s, 1e3MB/s. Bytes are B, bits are b or
// bit; prefixes k/K, M, G, T are powers of 1000, Ki, Mi, Gi, Ti of 1024.
func Rate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	i := numberEnd(t)
	if i == 0 {
		return 0, fmt.Errorf("bandwidth %q: want a number with units such as 64GB/s or 200Gbit/s", s)
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("bandwidth %q: want a number with units such as 64GB/s or 200Gbit/s", s)
	}
	unit := strings.TrimSpace(t[i:])
	unit, ok := strings.CutSuffix(unit, "/s")
	if !ok {
		unit, ok = strings.CutSuffix(unit, "ps")
	}
	if !ok {
		return 0, fmt.Errorf("bandwidth %q: units must end in /s (64GB/s, 200Gbit/s)", s)
	}
	scale := map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
	var bits bool
	switch {
	case strings.HasSuffix(unit, "bit"):
		unit, bits = strings.TrimSuffix(unit, "bit"), true
	case strings.HasSuffix(unit, "b"):
		unit, bits = strings.TrimSuffix(unit, "b"), true
	case strings.HasSuffix(unit, "B"):
		unit = strings.TrimSuffix(unit, "B")
	default:
		return 0, fmt.Errorf("bandwidth %q: unit must be bytes (B) or bits (b, bit) per second", s)
	}
	m, ok := scale[unit]
	if !ok {
		return 0, fmt.Errorf("bandwidth %q: unknown prefix %q", s, unit)
	}
	bps := v * m
	if bits {
		bps /= 8
	}
	if v <= 0 {
		return 0, outOfRange("bandwidth %q: must be positive", s)
	}
	if !(bps >= MinRate && bps <= MaxRate) {
		return 0, outOfRange("bandwidth %q: want %s", s, RateRange)
	}
	return bps, nil
}

// numberEnd returns the length of the decimal number (digits, a point, an
// exponent such as e-3) at the start of s.
func numberEnd(s string) int {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// AddDurations returns the sum of durations that are not negative,
// saturating at math.MaxInt64 nanoseconds instead of wrapping to a
// negative time.
func AddDurations(ds ...time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		if d > math.MaxInt64-sum {
			return math.MaxInt64
		}
		sum += d
	}
	return sum
}

// DurationOf returns secs seconds as a Duration, saturating at
// math.MaxInt64 nanoseconds (and 0 below 0 or for NaN) instead of
// overflowing.
func DurationOf(secs float64) time.Duration {
	ns := secs * 1e9
	switch {
	case !(ns > 0):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// MaxCount bounds a count a user gives (iterations, ranks, runs, a root):
// every flag has its own, smaller limit as well, which its check names.
const MaxCount = 1 << 31

// Count parses a whole number within ±MaxCount.
func Count(s string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%q is not a whole number", s)
	case err != nil || n > MaxCount || n < -MaxCount:
		return 0, outOfRange("%q: want a number from %d to %d", s, -MaxCount, MaxCount)
	}
	return int(n), nil
}

// HumanBytes writes n bytes in binary units with one decimal, 1.5GiB, and
// bytes below 1 KiB as they are, 512B: the form the memory and system
// limits' messages give their figures in.
func HumanBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%dB", n)
	}
	return fmt.Sprintf("%.1f%s", v, units[u])
}
