package traffic

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/listarg"
)

// Kind names where a matrix comes from.
type Kind string

// The kinds of a Spec.
const (
	// File is a matrix file in nccl-tests' format.
	File Kind = "file"
	// Spread is nccl-tests' generated pattern: every rank sends the row's
	// size, spread over its peers by distance (NCCL_TESTS_ALLTOALLV_SPREAD).
	Spread Kind = "spread"
	// Uniform routes every token to experts chosen with equal chances.
	Uniform Kind = "uniform"
	// Zipf routes tokens to expert e (from 0) with a chance proportional
	// to 1/(e+1)^s.
	Zipf Kind = "zipf"
	// Hot routes a share of the tokens to the first Hot experts and the
	// rest to the others, evenly within each group.
	Hot Kind = "hot"
)

// Draw says when a routing is drawn.
type Draw string

// The draws of a routing.
const (
	// DrawIter draws a new routing for every iteration.
	DrawIter Draw = "iter"
	// DrawFixed draws one routing, the same for every iteration.
	DrawFixed Draw = "fixed"
)

// Place says on which rank each expert lives.
type Place string

// The placements of experts.
const (
	// PlaceBlock puts expert e on rank e*n/E: ranks hold consecutive
	// experts, E/n each when E is a multiple of n (so the first, hottest
	// experts of zipf and hot share rank 0).
	PlaceBlock Place = "block"
	// PlaceCyclic puts expert e on rank e mod n.
	PlaceCyclic Place = "cyclic"
)

// Limits of a spec's numbers.
const (
	// MaxExperts is the most experts a routing has.
	MaxExperts = 1 << 20
	// MaxTopK is the most experts one token is routed to.
	MaxTopK = 256
	// MaxS is the largest Zipf exponent; past about 40 every token goes
	// to expert 0 anyway.
	MaxS = 100
	// MaxRowDraws bounds the experts drawn for one sender's row
	// (tokens x topk): 2^28, a few seconds of drawing.
	MaxRowDraws = 1 << 28
	// MaxHidden is the largest token: 1 GiB.
	MaxHidden = 1 << 30
)

// Spec names a matrix source and its parameters. Its zero value is not a
// valid spec: start from ParseSpec or DefaultSpec.
type Spec struct {
	// Kind is where the matrix comes from; it says which fields matter.
	Kind Kind
	// Path is File's matrix file.
	Path string
	// Scale multiplies every value of File's matrix
	// (NCCL_TESTS_ALLTOALLV_MATRIX_SCALE), from 0 to MaxScale.
	Scale float64
	// Spread blends Spread's pattern from even (0) to distance-weighted
	// (1) (NCCL_TESTS_ALLTOALLV_SPREAD).
	Spread float64
	// Bytes is what each rank sends in Spread's pattern; 0 takes the
	// row's size, as nccl-tests does.
	Bytes int64
	// Tokens is how many tokens each rank routes; 0 (tokens=0) takes as
	// many as the row's size holds: size / (Hidden x TopK).
	Tokens int64
	// Hidden is the bytes of one token, a multiple of Align.
	Hidden int64
	// Experts is how many experts there are; 0 means one per rank
	// (experts=0 in a spec).
	Experts int
	// TopK is how many distinct experts each token goes to.
	TopK int
	// S is Zipf's exponent (0 is uniform).
	S float64
	// HotExperts is how many experts are hot, and Share the fraction of
	// the tokens' choices that go to them (Hot).
	HotExperts int
	Share      float64
	// Seed starts every draw.
	Seed uint64
	// Draw says whether every iteration draws anew.
	Draw Draw
	// Place says where the experts live.
	Place Place
}

// DefaultSpec returns the spec of kind with every parameter at its
// default: 4096 tokens a rank, or with Spread the row's size; tokens of
// 8 KiB; one expert per rank; top-1; Zipf's s = 1; one hot expert taking
// half; nccl-tests' spread of 1 and scale of 1; seed 1; a new draw per
// iteration; block placement.
func DefaultSpec(kind Kind) Spec {
	return Spec{Kind: kind, Scale: 1, Spread: 1, Tokens: 4096, Hidden: 8192, TopK: 1,
		S: 1, HotExperts: 1, Share: 0.5, Seed: 1, Draw: DrawIter, Place: PlaceBlock}
}

// keys lists the keys each kind takes, in the order String writes them.
var keys = map[Kind][]string{
	File:    nil,
	Spread:  {"spread", "bytes"},
	Uniform: {"tokens", "hidden", "experts", "topk", "seed", "draw", "place"},
	Zipf:    {"s", "tokens", "hidden", "experts", "topk", "seed", "draw", "place"},
	Hot:     {"hot", "share", "tokens", "hidden", "experts", "topk", "seed", "draw", "place"},
}

// ParseSpec reads a spec written KIND or KIND:KEY=VALUE,KEY=VALUE...:
//
//	file:PATH                       everything after the colon is the path
//	spread[:spread=F,bytes=SIZE]
//	uniform[:tokens=T,hidden=SIZE,experts=E,topk=K,seed=N,draw=iter|fixed,place=block|cyclic]
//	zipf[:s=F,...]                  the keys of uniform too
//	hot[:hot=N,share=F,...]         the keys of uniform too
//
// A key given twice, an unknown key, an empty item and a value out of its
// range are refused; checks that need the number of ranks are Validate's.
// Errors are one line naming the spec.
func ParseSpec(s string) (Spec, error) {
	kindText, opts, hasOpts := strings.Cut(strings.TrimSpace(s), ":")
	kind := Kind(strings.ToLower(strings.TrimSpace(kindText)))
	allowed, ok := keys[kind]
	if !ok {
		return Spec{}, fmt.Errorf("traffic %q: unknown kind %q: want file:PATH, spread, uniform, zipf or hot", s, kindText)
	}
	sp := DefaultSpec(kind)
	if kind == File {
		sp.Path = opts
		if strings.TrimSpace(opts) == "" {
			return Spec{}, fmt.Errorf("traffic %q: file:PATH names no file", s)
		}
		return sp, nil
	}
	if kind == Spread {
		sp.Tokens = 0
	}
	if !hasOpts {
		return sp, nil
	}
	ks, vs, err := listarg.Keys(fmt.Sprintf("traffic %s", kind), opts, ",", "=", strings.ToLower)
	if err != nil {
		return Spec{}, err
	}
	for i, k := range ks {
		if !contains(allowed, k) {
			return Spec{}, fmt.Errorf("traffic %q: %s takes no key %q: want %s", s, kind, k, strings.Join(allowed, ", "))
		}
		if err := sp.set(k, vs[i]); err != nil {
			return Spec{}, fmt.Errorf("traffic %q: %s=%s: %w", s, k, vs[i], err)
		}
	}
	return sp, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// set sets the field of key k from v, checking its own range.
func (sp *Spec) set(k, v string) error {
	var err error
	switch k {
	case "spread":
		sp.Spread, err = fraction(v)
	case "share":
		sp.Share, err = fraction(v)
	case "s":
		sp.S, err = number(v, 0, MaxS)
	case "bytes":
		sp.Bytes, err = size(v, MaxRankBytes)
	case "hidden":
		sp.Hidden, err = size(v, MaxHidden)
		if err == nil && (sp.Hidden == 0 || sp.Hidden%Align != 0) {
			err = fmt.Errorf("want a positive multiple of %d bytes, as nccl-tests aligns every size", Align)
		}
	case "tokens":
		var n int
		n, err = count(v, 0, MaxRowDraws)
		sp.Tokens = int64(n)
	case "experts":
		sp.Experts, err = count(v, 0, MaxExperts)
	case "topk":
		sp.TopK, err = count(v, 1, MaxTopK)
	case "hot":
		sp.HotExperts, err = count(v, 1, MaxExperts)
	case "seed":
		sp.Seed, err = strconv.ParseUint(v, 10, 64)
		if err != nil {
			err = errors.New("want a whole number from 0 to 2^64-1")
		}
	case "draw":
		sp.Draw = Draw(strings.ToLower(v))
		if sp.Draw != DrawIter && sp.Draw != DrawFixed {
			err = errors.New("want iter or fixed")
		}
	case "place":
		sp.Place = Place(strings.ToLower(v))
		if sp.Place != PlaceBlock && sp.Place != PlaceCyclic {
			err = errors.New("want block or cyclic")
		}
	}
	return err
}

func fraction(v string) (float64, error) { return number(v, 0, 1) }

// number parses a finite float within [lo, hi].
func number(v string, lo, hi float64) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, errors.New("not a number")
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0, errors.New("not a finite number")
	case x < lo || x > hi:
		return 0, fmt.Errorf("want a number from %g to %g", lo, hi)
	}
	return x, nil
}

func count(v string, lo, hi int) (int, error) {
	n, err := limits.Count(v)
	if err != nil && !errors.Is(err, limits.ErrRange) {
		return 0, errors.New("not a whole number")
	}
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("want a whole number from %d to %d", lo, hi)
	}
	return n, nil
}

func size(v string, hi int64) (int64, error) {
	n, err := limits.Size(v)
	if err != nil && !errors.Is(err, limits.ErrRange) {
		return 0, errors.New("not a size (4096, 14K, 1M)")
	}
	if err != nil || n > hi {
		return 0, fmt.Errorf("want a size from 0 to %d bytes", hi)
	}
	return n, nil
}

// String writes the spec as ParseSpec reads it, every key of its kind
// spelled out, so that a row says exactly what was drawn.
func (sp Spec) String() string {
	if sp.Kind == File {
		return "file:" + sp.Path
	}
	var b strings.Builder
	b.WriteString(string(sp.Kind))
	for i, k := range keys[sp.Kind] {
		if i == 0 {
			b.WriteByte(':')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + sp.value(k))
	}
	return b.String()
}

func (sp Spec) value(k string) string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch k {
	case "spread":
		return g(sp.Spread)
	case "share":
		return g(sp.Share)
	case "s":
		return g(sp.S)
	case "bytes":
		return strconv.FormatInt(sp.Bytes, 10)
	case "hidden":
		return strconv.FormatInt(sp.Hidden, 10)
	case "tokens":
		return strconv.FormatInt(sp.Tokens, 10)
	case "experts":
		return strconv.Itoa(sp.Experts)
	case "topk":
		return strconv.Itoa(sp.TopK)
	case "hot":
		return strconv.Itoa(sp.HotExperts)
	case "seed":
		return strconv.FormatUint(sp.Seed, 10)
	case "draw":
		return string(sp.Draw)
	case "place":
		return string(sp.Place)
	}
	return ""
}
