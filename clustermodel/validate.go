package clustermodel

// What a model file may hold: Validate and the checks of its parts.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/limits"
)

// ErrInvalid is what errors.Is finds in Validate's errors.
var ErrInvalid = errors.New("invalid model")

// invalid returns an error of Validate.
func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// Validate reports the first figure of m that makes no sense: the wrong
// version or kind, a latency or bandwidth that is not a finite positive
// number within the tool's limits, a collective that is unknown or twice,
// a scale off by more than a thousand, scales between servers half set,
// on a collective fitted on one server or in a model without that link,
// a world or size span that is empty or out of order, an alternative
// that does not match the model's collectives.
func (m *Model) Validate() error {
	if m.Version != Version {
		return invalid("version %d, this build reads version %d only (fit the logs again with this build)", m.Version, Version)
	}
	if m.Kind != Kind {
		return invalid("kind %q, want %q", m.Kind, Kind)
	}
	if err := m.checkText(); err != nil {
		return err
	}
	if err := m.Intra.validate("intra"); err != nil {
		return err
	}
	if m.Intra.Ports != "" {
		return invalid("intra.ports %q: only the link between servers (inter) has ports; what a server's ranks share inside it is cores", m.Intra.Ports)
	}
	if m.Inter != nil {
		if err := m.Inter.validate("inter"); err != nil {
			return err
		}
		if p := m.Inter.Ports; p != "" && p != PortsRank && p != PortsServer {
			return invalid("inter.ports %q: want %q (a link a rank) or %q (one a server, its ranks share it)", p, PortsRank, PortsServer)
		}
	}
	if err := rate("reduce_GBps", m.ReduceGBps); err != nil {
		return err
	}
	if m.Cores < 0 || m.Cores > limits.MaxCount {
		return invalid("cores %d: want 0 (devices) to %d", m.Cores, limits.MaxCount)
	}
	if m.HostGBps != 0 {
		if err := rate("host_GBps", m.HostGBps); err != nil {
			return err
		}
	}
	if len(m.Ops) == 0 {
		return invalid("no collective fitted (ops is empty)")
	}
	seen := map[string]bool{}
	for _, o := range m.Ops {
		if err := o.validate(); err != nil {
			return err
		}
		if seen[o.Name] {
			return invalid("op %s fitted twice", o.Name)
		}
		if o.InterBWScale != 0 && m.Inter == nil {
			return invalid("op %s: scales of the link between servers in a model that has none", o.Name)
		}
		seen[o.Name] = true
	}
	if err := m.validateAlternatives(); err != nil {
		return err
	}
	return m.Fitted.validate(m.Inter != nil)
}

// checkText refuses a text field that holds a control character (a
// newline, an escape sequence, a NUL) or is not UTF-8: predict prints
// them into its table's header and into the exports, where a newline
// would start a line that is not a comment and an escape would reach the
// terminal.
func (m *Model) checkText() error {
	fields := []struct{ name, text string }{{"source", m.Source}, {"device", m.Device}, {"intra.from", m.Intra.From}}
	if m.Inter != nil {
		fields = append(fields, struct{ name, text string }{"inter.from", m.Inter.From})
	}
	for _, o := range m.Ops {
		fields = append(fields, struct{ name, text string }{"op " + o.Name + ": note", o.Note})
	}
	for _, f := range fields {
		if !utf8.ValidString(f.text) {
			return invalid("%s: not UTF-8 text", f.name)
		}
		if i := strings.IndexFunc(f.text, unicode.IsControl); i >= 0 {
			return invalid("%s: a control character (%U) at byte %d: a model's text is one line of printable characters", f.name, []rune(f.text[i:])[0], i)
		}
	}
	return nil
}

// validate checks one level.
func (l Level) validate(name string) error {
	us := l.AlphaUS
	if !(us > 0) || math.IsInf(us, 0) || us > limits.MaxDuration.Seconds()*1e6 {
		return invalid("%s.alpha_us %v: want a finite latency above 0", name, us)
	}
	return rate(name+".bw_GBps", l.GBps)
}

// rate checks a rate in GB/s against the tool's limits on rates.
func rate(name string, gbps float64) error {
	if !(gbps*1e9 >= limits.MinRate) || !(gbps*1e9 <= limits.MaxRate) {
		return invalid("%s %v: want a rate within %s", name, gbps, limits.RateRange)
	}
	return nil
}

// validate checks one collective's fit.
func (o Op) validate() error {
	op, err := coll.ParseOp(o.Name)
	if err != nil || op.String() != o.Name {
		return invalid("op %q: not a collective's name", o.Name)
	}
	scales := []struct {
		name string
		v    float64
	}{{"bw_scale", o.BWScale}, {"lat_scale", o.LatScale}}
	if o.InterBWScale != 0 || o.InterLatScale != 0 {
		if o.OneServer {
			return invalid("op %s: scales of the link between servers and one_server: fitted on one server, it has no such rows", o.Name)
		}
		scales = append(scales, []struct {
			name string
			v    float64
		}{{"inter_bw_scale", o.InterBWScale}, {"inter_lat_scale", o.InterLatScale}}...)
	}
	for _, s := range scales {
		if !(s.v >= 1e-3 && s.v <= 1e3) {
			return invalid("op %s: %s %v: want a factor from 0.001 to 1000", o.Name, s.name, s.v)
		}
	}
	if o.Shape != "" && !slices.Contains(coll.Names(op), o.Shape) {
		return invalid("op %s: shape %q is no algorithm of %s", o.Name, o.Shape, o.Name)
	}
	for _, p := range []float64{o.MedianPct, o.WorstPct, o.LargeP75Pct, o.GrowthPct} {
		if !(p >= 0 && p <= 1e4) {
			return invalid("op %s: an error of %v%%: want 0 to 10000", o.Name, p)
		}
	}
	if o.Rows < 1 {
		return invalid("op %s: rows %d: a fit needs rows", o.Name, o.Rows)
	}
	return nil
}

// validate checks the span; inter says whether the model has a link
// between servers, which only worlds of several servers can give.
func (s Span) validate(inter bool) error {
	if len(s.Worlds) == 0 {
		return invalid("fitted.worlds is empty")
	}
	multi := false
	for i, w := range s.Worlds {
		// Each factor is bounded before the product, which a hand-edited
		// world (2^62+1 servers of 4) wraps round to a few ranks.
		if w.Servers < 1 || w.PerServer < 1 || w.Servers > MaxRanks || w.PerServer > MaxRanks ||
			w.Ranks() > MaxRanks || w.Ranks() < 2 {
			return invalid("fitted world %d x %d: want 2 to %d ranks", w.Servers, w.PerServer, MaxRanks)
		}
		if i > 0 && w.Ranks() < s.Worlds[i-1].Ranks() {
			return invalid("fitted.worlds out of order (%v after %v)", w, s.Worlds[i-1])
		}
		multi = multi || w.Servers > 1
	}
	if multi != inter {
		return invalid("inter is %s but the fitted worlds %s several servers", map[bool]string{true: "set", false: "missing"}[inter],
			map[bool]string{true: "include", false: "have no world of"}[multi])
	}
	if s.MinBytes < 1 || s.MaxBytes < s.MinBytes || s.MaxBytes > limits.MaxSize {
		return invalid("fitted sizes %d..%d: want 1 <= min <= max <= %d", s.MinBytes, s.MaxBytes, int64(limits.MaxSize))
	}
	return nil
}
