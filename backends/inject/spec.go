// Package inject wraps a Transport with faults given on the command line
// (--inject): delayed or bandwidth-limited messages, a rank that arrives
// late to every call, failed transfers or dropped connections, and
// corrupted payloads. Random choices come from one seed, so a run can be
// repeated exactly. Holds (delays, bandwidth limits, slow ranks) keep the
// rank from going on, in wall time; on a backend in virtual time (sim) a
// delay or bandwidth limit holds the message on its sender's port instead
// (backends.LinkHolder), as a slower link would, and a slow rank holds the
// rank's virtual clock (backends.Holder).
package inject

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/listarg"
)

// Kind is what a fault does.
type Kind uint8

// The fault kinds.
const (
	// Delay holds each matching message for a time (fixed, or uniform in a
	// range) before it is posted.
	Delay Kind = iota + 1
	// Bandwidth holds each matching message for its length over a rate.
	Bandwidth
	// Slow makes a rank start every call late by a time: a straggler.
	Slow
	// Fail makes a matching send fail: the connection to the peer is
	// dropped where the backend can drop one (tcp), else the transfer
	// fails (shm).
	Fail
	// Corrupt flips one bit of a matching message's payload (in a copy).
	Corrupt
)

var kindNames = map[string]Kind{"delay": Delay, "bw": Bandwidth, "slow": Slow, "fail": Fail, "corrupt": Corrupt}

// Fault is one clause of a spec.
type Fault struct {
	Kind     Kind
	Min, Max time.Duration // Delay (Min == Max: fixed) and Slow
	Rate     float64       // Bandwidth, bytes per second
	// Call, for Fail and Corrupt: the call at which the fault fires once,
	// counted among the measured calls on a gated transport (WrapGated;
	// errors say "measured op #N"), else the call's own number ("op #N");
	// 0 with Prob instead.
	Call uint64
	Prob float64 // Fail and Corrupt: probability per matching message
	// From and To limit the fault to messages from rank From and to rank
	// To; -1 matches any. Slow uses From as its rank.
	From, To int
}

// Spec is a list of faults.
type Spec []Fault

// Grammar is the --inject grammar, for --help (lines short enough for its
// column).
const Grammar = `KIND=VALUE[@SCOPE] clauses, ';' between:
delay=DUR or MIN..MAX  hold each message (200us, 0..1ms)
bw=RATE                hold each message size/RATE (10MB/s)
slow=DUR@rank=R        rank R starts every call DUR late
fail=op:N or p:P       fail a send in measured op N, or by chance P
corrupt=op:N or p:P    flip a bit in measured op N, or by chance P
SCOPE: rank=R (from R) or link=A-B (from A to B)`

// Parse reads a spec in Grammar's form; "" is no fault.
func Parse(s string) (Spec, error) {
	if s == "" {
		return nil, nil
	}
	clauses, err := listarg.Split("--inject", s, ";")
	if err != nil {
		return nil, err
	}
	var spec Spec
	seen := map[faultKey]string{}
	for _, clause := range clauses {
		f, err := parseClause(clause)
		if err != nil {
			return nil, fmt.Errorf("--inject %q: %w", clause, err)
		}
		// A key given twice is refused, as in every list: the same
		// fault twice would act twice, and two values of one (delay=1ms;
		// delay=2ms) leave which one holds to the reader's guess.
		k := f.key()
		if first, dup := seen[k]; dup && first == clause {
			return nil, fmt.Errorf("--inject %q: %s is listed twice", s, clause)
		} else if dup {
			return nil, fmt.Errorf("--inject %q: %s is given twice for the same messages (as %s and as %s): give it once", s, k, first, clause)
		}
		seen[k] = clause
		spec = append(spec, f)
	}
	return spec, nil
}

// faultKey is what makes a clause's key: its kind and scope, and for a
// fault at one call, the call (fail=op:3;fail=op:5 fail two calls).
type faultKey struct {
	kind     Kind
	from, to int
	call     uint64
}

// key is f's key.
func (f Fault) key() faultKey { return faultKey{kind: f.Kind, from: f.From, to: f.To, call: f.Call} }

// String names k as its clause would: "delay", "delay@rank=1",
// "fail=op:3@link=0-1".
func (k faultKey) String() string {
	s := kindName(k.kind)
	if k.call > 0 {
		s += fmt.Sprintf("=op:%d", k.call)
	}
	switch {
	case k.from >= 0 && k.to >= 0:
		s += fmt.Sprintf("@link=%d-%d", k.from, k.to)
	case k.from >= 0:
		s += fmt.Sprintf("@rank=%d", k.from)
	}
	return s
}

// kindName is the name --inject gives kind.
func kindName(kind Kind) string {
	for name, k := range kindNames {
		if k == kind {
			return name
		}
	}
	return fmt.Sprintf("Kind(%d)", kind)
}

func parseClause(clause string) (Fault, error) {
	body, scope, _ := strings.Cut(clause, "@")
	name, value, ok := strings.Cut(body, "=")
	if !ok {
		return Fault{}, fmt.Errorf("want KIND=VALUE")
	}
	kind, ok := kindNames[strings.TrimSpace(name)]
	if !ok {
		return Fault{}, fmt.Errorf("unknown fault %q (want delay, bw, slow, fail or corrupt)", name)
	}
	f := Fault{Kind: kind, From: -1, To: -1}
	if err := f.parseScope(strings.TrimSpace(scope)); err != nil {
		return Fault{}, err
	}
	value = strings.TrimSpace(value)
	var err error
	switch kind {
	case Delay, Slow:
		lo, hi, isRange := strings.Cut(value, "..")
		if f.Min, err = parseDuration(lo); err != nil {
			return Fault{}, err
		}
		f.Max = f.Min
		if isRange {
			if kind == Slow {
				return Fault{}, fmt.Errorf("slow takes one duration")
			}
			if f.Max, err = parseDuration(hi); err != nil {
				return Fault{}, err
			}
			if f.Max < f.Min {
				return Fault{}, fmt.Errorf("range %v..%v runs backwards", f.Min, f.Max)
			}
		}
		if kind == Slow && f.From < 0 {
			return Fault{}, fmt.Errorf("slow needs @rank=R")
		}
	case Bandwidth:
		if f.Rate, err = parseRate(value); err != nil {
			return Fault{}, err
		}
	case Fail, Corrupt:
		k, v, ok := strings.Cut(value, ":")
		switch {
		case ok && k == "op":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil || n == 0 {
				return Fault{}, fmt.Errorf("op:%s: want a call number from 1", v)
			}
			f.Call = n
		case ok && k == "p":
			p, err := strconv.ParseFloat(v, 64)
			if err != nil || !(p > 0 && p <= 1) {
				return Fault{}, fmt.Errorf("p:%s: want a probability in (0, 1]", v)
			}
			f.Prob = p
		default:
			return Fault{}, fmt.Errorf("%q: want op:N or p:P", value)
		}
	}
	return f, nil
}

func (f *Fault) parseScope(scope string) error {
	if scope == "" {
		return nil
	}
	k, v, ok := strings.Cut(scope, "=")
	switch {
	case ok && k == "rank":
		r, err := strconv.Atoi(v)
		if err != nil || r < 0 {
			return fmt.Errorf("rank=%s: want a rank", v)
		}
		f.From = r
	case ok && k == "link":
		a, b, ok := strings.Cut(v, "-")
		from, err1 := strconv.Atoi(a)
		to, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || from < 0 || to < 0 || from == to {
			return fmt.Errorf("link=%s: want two different ranks A-B", v)
		}
		f.From, f.To = from, to
	default:
		return fmt.Errorf("scope %q: want rank=R or link=A-B", scope)
	}
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	return limits.Duration(s, limits.GoDuration, 0)
}

// parseRate reads 100MB/s, 1.5GB/s or 800Mbit/s as bytes per second,
// within limits.MinRate and limits.MaxRate.
func parseRate(s string) (float64, error) {
	r, err := limits.Rate(s)
	switch {
	case errors.Is(err, limits.ErrRange):
		return 0, fmt.Errorf("rate %q: want %s", s, limits.RateRange)
	case err != nil:
		return 0, fmt.Errorf("rate %q: want a number with GB/s, MB/s, KB/s, Gbit/s or Mbit/s", s)
	}
	return r, nil
}

// Validate checks the spec against a world of n ranks and whether results
// are checked: corruption must never pass silently.
func (s Spec) Validate(n int, checked bool) error {
	for _, f := range s {
		if r := max(f.From, f.To); r >= n {
			return fmt.Errorf("--inject: rank out of range for %d ranks: %d (want 0 to %d)", n, r, n-1)
		}
		if f.Kind == Corrupt && !checked {
			return fmt.Errorf("--inject corrupt: needs the check (-c 1), or the corruption would pass unnoticed")
		}
	}
	return nil
}

// matches reports whether f applies to a message from rank from to rank to.
func (f Fault) matches(from, to int) bool {
	return (f.From < 0 || f.From == from) && (f.To < 0 || f.To == to)
}

// String writes the fault back in Grammar's form, to name it in errors:
// "delay=30s@rank=1".
func (f Fault) String() string {
	var s string
	switch f.Kind {
	case Delay:
		s = "delay=" + f.Min.String()
		if f.Max != f.Min {
			s += ".." + f.Max.String()
		}
	case Bandwidth:
		s = fmt.Sprintf("bw=%gMB/s", f.Rate/1e6)
	case Slow:
		s = "slow=" + f.Min.String()
	case Fail, Corrupt:
		s = "fail="
		if f.Kind == Corrupt {
			s = "corrupt="
		}
		if f.Call > 0 {
			s += fmt.Sprintf("op:%d", f.Call)
		} else {
			s += fmt.Sprintf("p:%g", f.Prob)
		}
	}
	switch {
	case f.From >= 0 && f.To >= 0:
		s += fmt.Sprintf("@link=%d-%d", f.From, f.To)
	case f.From >= 0:
		s += fmt.Sprintf("@rank=%d", f.From)
	}
	return s
}
