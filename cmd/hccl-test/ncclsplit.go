package main

import (
	"fmt"
	"strconv"
	"strings"
)

// nccl-tests' NCCL_TESTS_SPLIT_MASK and NCCL_TESTS_SPLIT give each
// process a color; the processes of one color form one communicator, and
// every communicator runs the op at once. Here a rank is colored (one
// rank per process, nccl-tests' -g 1), and the colors become the groups
// of --groups and --group, which run the same way.

// ncclSplit is what NCCL_TESTS_SPLIT_MASK or NCCL_TESTS_SPLIT says: the
// variable it came from and its value, and the color of a rank.
type ncclSplit struct {
	name, value string
	color       func(rank int) int
}

// parseNCCLSplit reads the variables as nccl-tests does: MASK (hex, with
// or without 0x) wins over SPLIT, which is AND, OR, MOD or DIV (or &, |,
// %, /) and a number (decimal, 0x hex, 0b binary, 0 octal). Where
// nccl-tests reads a value it cannot parse as no split, or divides by
// zero, a bad value is refused here. nil: neither is set.
func parseNCCLSplit(getenv func(string) string) (*ncclSplit, error) {
	if v := getenv("NCCL_TESTS_SPLIT_MASK"); v != "" {
		t := strings.TrimSpace(v)
		t = strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X")
		m, err := strconv.ParseUint(t, 16, 31)
		if err != nil {
			return nil, fmt.Errorf("NCCL_TESTS_SPLIT_MASK=%q: want a hexadecimal mask such as 0x7 (color = rank & mask)", v)
		}
		return &ncclSplit{"NCCL_TESTS_SPLIT_MASK", v, func(r int) int { return r & int(m) }}, nil
	}
	v := getenv("NCCL_TESTS_SPLIT")
	if v == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("NCCL_TESTS_SPLIT=%q: %s", v, why)
	}
	const want = "want AND, OR, MOD or DIV (or &, |, %, /) and a number, such as \"MOD 2\" or \"&0x1\""
	s := strings.TrimSpace(v)
	ops := []struct {
		names []string
		f     func(r, n int) int
	}{
		{[]string{"and", "&"}, func(r, n int) int { return r & n }},
		{[]string{"or", "|"}, func(r, n int) int { return r | n }},
		{[]string{"mod", "%"}, func(r, n int) int { return r % n }},
		{[]string{"div", "/"}, func(r, n int) int { return r / n }},
	}
	for i, op := range ops {
		for _, name := range op.names {
			if len(s) < len(name) || !strings.EqualFold(s[:len(name)], name) {
				continue
			}
			num := strings.TrimSpace(s[len(name):])
			base := 0
			if len(num) > 2 && strings.EqualFold(num[:2], "0b") {
				num, base = num[2:], 2
			}
			n, err := strconv.ParseUint(num, base, 31)
			if err != nil {
				return nil, bad(fmt.Sprintf("%q is not a number (decimal, 0x hex, 0b binary); %s", strings.TrimSpace(s[len(name):]), want))
			}
			if n == 0 && i >= 2 {
				return nil, bad(strings.ToUpper(op.names[0]) + " 0 divides by zero")
			}
			f := op.f
			return &ncclSplit{"NCCL_TESTS_SPLIT", v, func(r int) int { return f(r, int(n)) }}, nil
		}
	}
	return nil, bad(want)
}

// groups turns the split of a world of n ranks into a --groups layout and
// the --group to run in: "" and "" when every rank has one color (no
// split). Every color must have as many ranks, and the ranks of a color
// must be a world.Layout group: b ranks a stride a apart, in blocks of a x b
// (tp=a,cp=b,dp=c and --group cp, or the simpler forms of it), which
// MOD, DIV, masks of contiguous bits and most ORs give.
func (s *ncclSplit) groups(n int) (layout, group string, err error) {
	colors := map[int]int{} // color -> ranks of it
	for r := range n {
		colors[s.color(r)]++
	}
	if len(colors) == 1 {
		return "", "", nil
	}
	g := colors[s.color(0)]
	for c, k := range colors {
		if k != g {
			return "", "", fmt.Errorf("%s=%q: over %d ranks, color %d has %d ranks and color %d has %d: every group must have as many ranks (--ranks)",
				s.name, s.value, n, s.color(0), g, c, k)
		}
	}
	for a := 1; a*g <= n; a++ {
		if (n/g)%a != 0 || !s.isLayout(n, a, g) {
			continue
		}
		switch c := n / (a * g); {
		case a == 1:
			return fmt.Sprintf("tp=%d,dp=%d", g, c), "tp", nil
		case c == 1:
			return fmt.Sprintf("tp=%d,dp=%d", a, g), "dp", nil
		default:
			return fmt.Sprintf("tp=%d,cp=%d,dp=%d", a, g, c), "cp", nil
		}
	}
	return "", "", fmt.Errorf("%s=%q: over %d ranks, the groups of %d ranks are not evenly strided blocks (as MOD, DIV or a mask of contiguous bits gives), which --groups cannot lay out",
		s.name, s.value, n, g)
}

// isLayout reports whether two ranks share a color exactly when they share
// their coordinates r %% a and r / (a*b): the colors are then the cp
// groups of tp=a,cp=b,dp=n/(a*b).
func (s *ncclSplit) isLayout(n, a, b int) bool {
	keyOf := map[int]int{} // color -> coordinates' key
	colorOf := map[int]int{}
	for r := range n {
		c, key := s.color(r), (r/(a*b))*a+r%a
		if k, ok := keyOf[c]; ok && k != key {
			return false
		}
		if cc, ok := colorOf[key]; ok && cc != c {
			return false
		}
		keyOf[c], colorOf[key] = key, c
	}
	return true
}
