package clustermodel

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// alt returns an alternative that valid()'s model accepts.
func alt() Alternative {
	return Alternative{IntraAlphaUS: 2, IntraGBps: 300, InterAlphaUS: 10, InterGBps: 1e6, ReduceGBps: 40,
		Ops: []Scales{{Name: "allreduce", BWScale: 1.2, LatScale: 0.9, InterBWScale: 0.8, InterLatScale: 1.1}}, SqLogErr: 0.2}
}

// TestAlternativesRoundTrip writes a model with other optima and reads it
// back unchanged, and reads a model without them (as files written
// before them are) with none.
func TestAlternativesRoundTrip(t *testing.T) {
	m := valid()
	m.Alternatives = []Alternative{alt()}
	roundTrip(t, m)
	var buf bytes.Buffer
	if err := valid().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "alternatives") {
		t.Errorf("a model without other optima writes the field:\n%s", buf.String())
	}
}

// TestAlternativesRefused refuses every nonsense figure of an alternative,
// naming it.
func TestAlternativesRefused(t *testing.T) {
	cases := []struct {
		name string
		edit func(m *Model, a *Alternative)
		want string
	}{
		{"negative intra bandwidth", func(_ *Model, a *Alternative) { a.IntraGBps = -3 }, "alternatives[0].intra.bw_GBps -3"},
		{"zero intra latency", func(_ *Model, a *Alternative) { a.IntraAlphaUS = 0 }, "alternatives[0].intra.alpha_us 0"},
		{"infinite inter latency", func(_ *Model, a *Alternative) { a.InterAlphaUS = math.Inf(1) }, "alternatives[0].inter.alpha_us"},
		{"inter beyond the limit", func(_ *Model, a *Alternative) { a.InterGBps = 1e9 }, "alternatives[0].inter.bw_GBps"},
		{"inter without a level", func(m *Model, _ *Alternative) {
			m.Inter, m.Fitted.Worlds, m.Ops[0].InterBWScale, m.Ops[0].InterLatScale = nil, []World{{1, 8}}, 0, 0
		}, "a link between servers in a model that has none"},
		{"reduction NaN", func(_ *Model, a *Alternative) { a.ReduceGBps = math.NaN() }, "alternatives[0].reduce_GBps"},
		{"an op missing", func(_ *Model, a *Alternative) { a.Ops = nil }, "0 collectives, the model has 1"},
		{"another op", func(_ *Model, a *Alternative) { a.Ops[0].Name = "allgather" }, `op "allgather" where the model's ops have "allreduce"`},
		{"scale off", func(_ *Model, a *Alternative) { a.Ops[0].BWScale = 1e6 }, "bw_scale 1e+06"},
		{"scale between servers off", func(_ *Model, a *Alternative) { a.Ops[0].InterBWScale, a.Ops[0].InterLatScale = 1, math.Inf(1) }, "inter_lat_scale +Inf"},
		{"scales between servers the model's op has not", func(m *Model, _ *Alternative) { m.Ops[0].InterBWScale, m.Ops[0].InterLatScale = 0, 0 },
			"scales between servers where the model's op has none"},
		{"no scales between servers the model's op has", func(_ *Model, a *Alternative) { a.Ops[0].InterBWScale, a.Ops[0].InterLatScale = 0, 0 },
			"no scales between servers where the model's op has them"},
		{"negative error", func(_ *Model, a *Alternative) { a.SqLogErr = -1 }, "sq_log_err -1"},
		{"too many", func(m *Model, _ *Alternative) {
			for range MaxAlternatives {
				m.Alternatives = append(m.Alternatives, alt())
			}
		}, "17 alternatives: at most 16"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			a := alt()
			tc.edit(m, &a)
			m.Alternatives = append([]Alternative{a}, m.Alternatives...)
			err := m.Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") ||
				strings.Count(err.Error(), ErrInvalid.Error()) != 1 {
				t.Errorf("Validate: %v, want one line with %q, saying %q once", err, tc.want, ErrInvalid)
			}
		})
	}
}

// TestWith puts an alternative's figures on a copy of the model and
// leaves the model as it was.
func TestWith(t *testing.T) {
	m := valid()
	a := alt()
	m.Alternatives = []Alternative{a}
	c := m.With(a)
	if c.Intra.GBps != 300 || c.Inter.GBps != 1e6 || c.Inter.AlphaUS != 10 || c.ReduceGBps != 40 ||
		c.Ops[0].BWScale != 1.2 || c.Ops[0].LatScale != 0.9 || c.Ops[0].InterBWScale != 0.8 || c.Ops[0].InterLatScale != 1.1 || c.Ops[0].Shape != "ring" || c.Alternatives != nil {
		t.Errorf("With: %+v", c)
	}
	if !reflect.DeepEqual(m, func() *Model { v := valid(); v.Alternatives = []Alternative{alt()}; return v }()) {
		t.Errorf("With changed the model: %+v", m)
	}
}
