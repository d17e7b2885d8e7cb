package coll

import (
	"fmt"
	"strings"

	"github.com/hccl-test/hccl-test/internal/listarg"
)

// hcclLevel1 maps HCCL's level-1 (between servers) algorithm names to ours.
var hcclLevel1 = map[string]string{
	"ring":     "ring",
	"h-d_r":    "rhd",
	"nb":       "bruck",
	"pairwise": "pairwise",
}

// ParseHCCLAlgo reads HCCL's HCCL_ALGO environment variable and returns the
// algorithm it asks for, per collective, among ops. Two forms are accepted:
//
//	level0:NA;level1:H-D_R                          every collective
//	allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:NB
//
// Level 0 (inside a server) has no counterpart on one machine and is
// ignored. Level-1 names map to ours: ring to ring, H-D_R to rhd, NB to
// bruck, pairwise to pairwise. In the first form a collective that the
// algorithm does not serve is left to auto; in the second, naming one is an
// error. Collectives absent from the result run with auto.
func ParseHCCLAlgo(s string, ops []Op) (map[Op]string, error) {
	out := map[Op]string{}
	s = strings.TrimSpace(s)
	if s == "" {
		return out, nil
	}
	if !strings.Contains(s, "=") {
		name, err := hcclLevels(s)
		if err != nil {
			return nil, err
		}
		for _, op := range ops {
			if _, ok := lookup(op, name); ok {
				out[op] = name
			}
		}
		return out, nil
	}
	parts, err := listarg.Split("HCCL_ALGO", s, "/")
	if err != nil {
		return nil, err
	}
	for _, part := range parts {
		opName, levels, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("HCCL_ALGO %q: %q is not op=level0:X;level1:Y", s, part)
		}
		op, err := ParseOp(opName)
		if err != nil {
			return nil, fmt.Errorf("HCCL_ALGO %q: %w", s, err)
		}
		if _, dup := out[op]; dup {
			return nil, fmt.Errorf("HCCL_ALGO %q: %v given twice", s, op)
		}
		name, err := hcclLevels(levels)
		if err != nil {
			return nil, err
		}
		if _, ok := lookup(op, name); !ok {
			return nil, fmt.Errorf("HCCL_ALGO %q: %s does not serve %v (it has: %s)", s, name, op, strings.Join(Names(op), ", "))
		}
		out[op] = name
	}
	return out, nil
}

// hcclLevels reads "level0:X;level1:Y" and returns our name for Y.
func hcclLevels(s string) (string, error) {
	var level1 string
	keys, vals, err := listarg.Keys("HCCL_ALGO", s, ";", ":", strings.ToLower)
	if err != nil {
		return "", err
	}
	for i, k := range keys {
		if !strings.Contains(strings.Split(s, ";")[i], ":") {
			return "", fmt.Errorf("HCCL_ALGO %q: %q is not level<N>:<algorithm>", s, strings.Split(s, ";")[i])
		}
		switch k {
		case "level0":
			// Inside a server: nothing to choose on one machine.
		case "level1":
			level1 = vals[i]
		default:
			return "", fmt.Errorf("HCCL_ALGO %q: unknown level %q (want level0 or level1)", s, k)
		}
	}
	if level1 == "" {
		return "", fmt.Errorf("HCCL_ALGO %q: no level1 algorithm", s)
	}
	name, ok := hcclLevel1[strings.ToLower(level1)]
	if !ok {
		return "", fmt.Errorf("HCCL_ALGO %q: level1 %q has no counterpart here (want ring, H-D_R, NB or pairwise)", s, level1)
	}
	return name, nil
}
