package clustermodel

import (
	"fmt"
	"math"
	"strings"
)

// MaxAlternatives is the most other optima a model file holds: fit
// searches from a fixed, small set of starts.
const MaxAlternatives = 16

// Alternative is another optimum of the fit: figures of the levels, the
// reduction and each collective's scales that fit the same rows about as
// well as the model's own (their summed squared logarithmic error,
// SqLogErr, within the fit's tolerance of the model's), which the rows
// therefore cannot tell from them. predict evaluates each and widens its
// band to cover what they predict. Everything else of the model
// (transport, cores, ports, span, the rows' residuals) is the model's.
type Alternative struct {
	IntraAlphaUS float64 `json:"intra_alpha_us"`
	IntraGBps    float64 `json:"intra_bw_GBps"`
	// InterAlphaUS and InterGBps are the link between servers: set
	// exactly when the model has one.
	InterAlphaUS float64 `json:"inter_alpha_us,omitempty"`
	InterGBps    float64 `json:"inter_bw_GBps,omitempty"`
	ReduceGBps   float64 `json:"reduce_GBps"`
	// Ops are the collectives' scales under these levels, one for each
	// of the model's ops, in its order.
	Ops []Scales `json:"ops"`
	// SqLogErr is the sum, over the fitted rows, of the squared logarithm
	// of predicted over measured time.
	SqLogErr float64 `json:"sq_log_err"`
}

// Scales are one collective's scales under an Alternative.
type Scales struct {
	Name     string  `json:"op"`
	BWScale  float64 `json:"bw_scale"`
	LatScale float64 `json:"lat_scale"`
	// InterBWScale and InterLatScale are Op's of the same names.
	InterBWScale  float64 `json:"inter_bw_scale,omitempty"`
	InterLatScale float64 `json:"inter_lat_scale,omitempty"`
}

// Scales returns o's scales.
func (o Op) Scales() Scales {
	return Scales{Name: o.Name, BWScale: o.BWScale, LatScale: o.LatScale, InterBWScale: o.InterBWScale, InterLatScale: o.InterLatScale}
}

// set puts s's scales in o.
func (s Scales) set(o *Op) {
	o.BWScale, o.LatScale, o.InterBWScale, o.InterLatScale = s.BWScale, s.LatScale, s.InterBWScale, s.InterLatScale
}

// With returns a copy of m that has a's figures in place of its own and
// no alternatives.
func (m *Model) With(a Alternative) *Model {
	c := *m
	c.Alternatives = nil
	c.Intra.AlphaUS, c.Intra.GBps = a.IntraAlphaUS, a.IntraGBps
	if m.Inter != nil {
		inter := *m.Inter
		inter.AlphaUS, inter.GBps = a.InterAlphaUS, a.InterGBps
		c.Inter = &inter
	}
	c.ReduceGBps = a.ReduceGBps
	c.Ops = append([]Op(nil), m.Ops...)
	for i := range c.Ops {
		a.Ops[i].set(&c.Ops[i])
	}
	return &c
}

// validateAlternatives checks m's alternatives: at most MaxAlternatives,
// each with figures Validate would take of the model's own, a link
// between servers exactly when the model has one, the model's ops in its
// order, and an error that is a finite number of 0 or more.
func (m *Model) validateAlternatives() error {
	if len(m.Alternatives) > MaxAlternatives {
		return invalid("%d alternatives: at most %d", len(m.Alternatives), MaxAlternatives)
	}
	for i, a := range m.Alternatives {
		name := func(s string) string { return fmt.Sprintf("alternatives[%d].%s", i, s) }
		if err := (Level{AlphaUS: a.IntraAlphaUS, GBps: a.IntraGBps}).validate(name("intra")); err != nil {
			return err
		}
		if m.Inter != nil {
			if err := (Level{AlphaUS: a.InterAlphaUS, GBps: a.InterGBps}).validate(name("inter")); err != nil {
				return err
			}
		} else if a.InterAlphaUS != 0 || a.InterGBps != 0 {
			return invalid("%s: a link between servers in a model that has none", name("inter"))
		}
		if err := rate(name("reduce_GBps"), a.ReduceGBps); err != nil {
			return err
		}
		if len(a.Ops) != len(m.Ops) {
			return invalid("%s: %d collectives, the model has %d", name("ops"), len(a.Ops), len(m.Ops))
		}
		for j, s := range a.Ops {
			o := m.Ops[j]
			s.set(&o)
			if s.Name != o.Name {
				return invalid("%s: op %q where the model's ops have %q", name("ops"), s.Name, o.Name)
			}
			if own := m.Ops[j].InterBWScale != 0; (s.InterBWScale != 0 || s.InterLatScale != 0) != own {
				if own {
					return invalid("%s: op %s: no scales between servers where the model's op has them", name("ops"), s.Name)
				}
				return invalid("%s: op %s: scales between servers where the model's op has none", name("ops"), s.Name)
			}
			if err := o.validate(); err != nil {
				return invalid("%s: %s", name("ops"), strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
			}
		}
		if !(a.SqLogErr >= 0) || math.IsInf(a.SqLogErr, 0) {
			return invalid("%s %v: want a finite error of 0 or more", name("sq_log_err"), a.SqLogErr)
		}
	}
	return nil
}
