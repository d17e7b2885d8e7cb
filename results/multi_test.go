package results

import (
	"errors"
	"slices"
	"testing"
)

// callLog is a Sink that logs its calls and fails with err.
type callLog struct {
	name  string
	err   error
	calls *[]string
}

func (l callLog) Begin(Header) error { *l.calls = append(*l.calls, l.name+".Begin"); return l.err }
func (l callLog) Write(Record) error { *l.calls = append(*l.calls, l.name+".Write"); return l.err }
func (l callLog) End(Summary) error  { *l.calls = append(*l.calls, l.name+".End"); return l.err }

func TestMultiCallsEverySink(t *testing.T) {
	errA, errB := errors.New("a failed"), errors.New("b failed")
	for _, c := range []struct {
		name    string
		errs    []error
		wantErr error
	}{
		{"all succeed", []error{nil, nil, nil}, nil},
		{"middle fails", []error{nil, errB, nil}, errB},
		{"first of two failures", []error{errA, errB, nil}, errA},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls []string
			var sinks []Sink
			for i, err := range c.errs {
				sinks = append(sinks, callLog{name: string(rune('a' + i)), err: err, calls: &calls})
			}
			m := Multi(sinks...)
			for _, call := range []func() error{
				func() error { return m.Begin(Header{}) },
				func() error { return m.Write(Record{}) },
				func() error { return m.End(Summary{}) },
			} {
				if err := call(); err != c.wantErr {
					t.Errorf("error %v, want %v", err, c.wantErr)
				}
			}
			want := []string{"a.Begin", "b.Begin", "c.Begin", "a.Write", "b.Write", "c.Write", "a.End", "b.End", "c.End"}
			if !slices.Equal(calls, want) {
				t.Errorf("calls %q, want %q", calls, want)
			}
		})
	}
}
