package limits

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		in   string
		form Form
		min  time.Duration
		want time.Duration
		err  string // "" for no error
		rng  bool   // the error is ErrRange
	}{
		{in: "90s", form: SecondsOrDuration, want: 90 * time.Second},
		{in: "90", form: SecondsOrDuration, want: 90 * time.Second},
		{in: "0.5", form: Seconds, want: 500 * time.Millisecond},
		{in: "0", form: SecondsOrDuration, want: 0},
		{in: "168h", form: GoDuration, want: MaxDuration},
		{in: "604800", form: Seconds, want: MaxDuration},
		{in: "200us", form: GoDuration, want: 200 * time.Microsecond},
		{in: "99999999999", form: SecondsOrDuration, err: "more than the limit of 168h0m0s", rng: true},
		{in: "1e400", form: Seconds, err: "more than the limit", rng: true},
		{in: "168h1s", form: GoDuration, err: "more than the limit", rng: true},
		{in: "9999999999h", form: GoDuration, err: "more than the limit", rng: true},
		{in: "NaN", form: Seconds, err: "not a number of seconds"},
		{in: "-Inf", form: SecondsOrDuration, err: "must not be negative", rng: true},
		{in: "-5", form: Seconds, err: "must not be negative", rng: true},
		{in: "-5ms", form: GoDuration, err: "must not be negative", rng: true},
		{in: "1e-10", form: Seconds, err: "shorter than 1ns", rng: true},
		{in: "0", form: Seconds, min: 1, err: "want a positive duration", rng: true},
		{in: "90", form: GoDuration, err: "is not a duration such as 2us"},
		{in: "2m", form: Seconds, err: "want a number of seconds"},
		{in: "soon", form: SecondsOrDuration, err: "neither seconds nor a duration"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Duration(tc.in, tc.form, tc.min)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %v, %v; want an error containing %q", got, err, tc.err)
			}
			if errors.Is(err, ErrRange) != tc.rng {
				t.Errorf("errors.Is(%v, ErrRange) = %v, want %v", err, !tc.rng, tc.rng)
			}
		})
	}
}

func TestSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{in: "1.5M", want: 3 << 19},
		{in: "1P", err: "not a number"},
		{in: "1024T", want: MaxSize},
		{in: "1025T", err: "larger than the limit"},
		{in: "NaN", err: "not a number"},
		{in: "NaNK", err: "not a number"},
		{in: "-Inf", err: "must not be negative"},
		{in: "Inf", err: "larger than the limit"},
	}
	for _, tc := range tests {
		got, err := Size(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("Size(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Size(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.err)
		}
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		in   string
		want float64 // bytes per second
		err  string
	}{
		{in: "64GB/s", want: 64e9},
		{in: "1e3MB/s", want: 1e9},
		{in: "200Gbit/s", want: 25e9},
		{in: "10KB/s", want: 1e4},
		{in: "1B/s", want: 1},
		{in: "1PB/s", err: "unknown prefix"},
		{in: "1000TB/s", want: 1e15},
		{in: "1001TB/s", err: "want 1B/s to 1000TB/s"},
		{in: "1e-300MB/s", err: "want 1B/s to 1000TB/s"},
		{in: "7bit/s", err: "want 1B/s to 1000TB/s"},
		{in: "1e400GB/s", err: "want 1B/s to 1000TB/s"},
		{in: "0GB/s", err: "must be positive"},
		{in: "NaNGB/s", err: "want a number with units"},
		{in: "1eGB/s", err: "unknown prefix"},
		{in: "64GB", err: "must end in /s"},
	}
	for _, tc := range tests {
		got, err := Rate(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("Rate(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Rate(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.err)
		}
	}
}

func TestSaturation(t *testing.T) {
	const maxD = time.Duration(1<<63 - 1)
	tests := []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"sum", AddDurations(time.Second, 2*time.Second), 3 * time.Second},
		{"sum past the end", AddDurations(maxD/2, maxD/2, 2), maxD},
		{"a week a million times", AddDurations(MaxDuration, maxD-MaxDuration/2), maxD},
		{"seconds", DurationOf(1.5), 1500 * time.Millisecond},
		{"a PiB at 1B/s", DurationOf(MaxSize / MinRate), maxD},
		{"NaN", DurationOf(math.NaN()), 0},
		{"negative", DurationOf(-1), 0},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		in   string
		want int
		err  string
	}{
		{in: "20", want: 20},
		{in: "-1", want: -1},
		{in: "2147483648", want: MaxCount},
		{in: "2147483649", err: "want a number from -2147483648 to 2147483648"},
		{in: "99999999999999999999", err: "want a number from"},
		{in: "1.5", err: "is not a whole number"},
		{in: "0x10", err: "is not a whole number"},
		{in: "", err: "is not a whole number"},
	}
	for _, tc := range tests {
		got, err := Count(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("Count(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Count(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.err)
		}
	}
}
