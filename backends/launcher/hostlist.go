package launcher

import (
	"fmt"
	"strconv"
	"strings"
)

// maxHosts bounds how many names expandHosts returns.
const maxHosts = 65536

// expandHosts expands a Slurm host list, such as "node[01-04,07],gpu5" or
// "rack[1-2]-n[1-2]", into its host names in order: a bracket holds
// comma-separated numbers and ranges, each range's numbers padded to the
// width of its first. More than maxHosts names is an error.
func expandHosts(list string) ([]string, error) {
	var out []string
	for _, item := range splitTop(list) {
		if item == "" {
			return nil, fmt.Errorf("an empty host name")
		}
		names, err := expandItem(item, maxHosts-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no host")
	}
	return out, nil
}

// splitTop splits s at the commas outside brackets.
func splitTop(s string) []string {
	var parts []string
	depth, from := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[from:i])
				from = i + 1
			}
		}
	}
	return append(parts, s[from:])
}

// expandItem expands one name of a host list, with any number of
// brackets, into at most limit names.
func expandItem(item string, limit int) ([]string, error) {
	open := strings.IndexByte(item, '[')
	if open < 0 {
		if strings.ContainsRune(item, ']') {
			return nil, fmt.Errorf("%q: a ] without its [", item)
		}
		return []string{item}, nil
	}
	end := strings.IndexByte(item[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("%q: a [ without its ]", item)
	}
	end += open
	nums, err := expandRanges(item[open+1:end], limit)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", item, err)
	}
	var out []string
	for _, n := range nums {
		rest, err := expandItem(item[end+1:], limit-len(out))
		if err != nil {
			return nil, err
		}
		for _, r := range rest {
			out = append(out, item[:open]+n+r)
		}
		if len(out) > limit {
			return nil, fmt.Errorf("more than %d hosts", maxHosts)
		}
	}
	return out, nil
}

// expandRanges expands "01-04,07" into "01" "02" "03" "04" "07".
func expandRanges(spec string, limit int) ([]string, error) {
	var out []string
	for _, r := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.ParseUint(lo, 10, 32)
		b, err2 := strconv.ParseUint(hi, 10, 32)
		if err1 != nil || err2 != nil || b < a {
			return nil, fmt.Errorf("[%s]: %q is not a number or a range lo-hi", spec, r)
		}
		if b-a >= uint64(limit-len(out)) {
			return nil, fmt.Errorf("more than %d hosts", maxHosts)
		}
		for n := a; n <= b; n++ {
			out = append(out, fmt.Sprintf("%0*d", len(lo), n))
		}
	}
	return out, nil
}
