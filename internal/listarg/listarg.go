// Package listarg reads the lists users give in flags and environment
// variables (--op allreduce,broadcast, --fusion 1,4,16, HCCL_ALGO's
// levels, --inject's clauses) by one rule: items are trimmed, and an empty
// item or one that repeats an earlier item is refused, with an error that
// names the flag or variable and the item. A doubled or trailing separator
// is a typo, and a repeated item would only measure or set the same thing
// twice, so neither is taken silently.
package listarg

import (
	"fmt"
	"strings"
)

// Split splits s at sep into trimmed items. name is the flag or variable
// the list came from, as errors should name it ("--op", "HCCL_ALGO"). An
// empty list or an empty item is an error; repeats are not checked (see
// Parse and Keys).
func Split(name, s, sep string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%s %q: an empty list", name, s)
	}
	items := strings.Split(s, sep)
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
		if items[i] == "" {
			return nil, fmt.Errorf("%s %q: an empty name at item %d of %d", name, s, i+1, len(items))
		}
	}
	return items, nil
}

// Parse splits s as Split does and parses every item. An item that parses
// to the same value as an earlier one (the same name, or an alias of it)
// is an error; so is an item parse refuses, wrapped with name.
func Parse[T comparable](name, s, sep string, parse func(string) (T, error)) ([]T, error) {
	return ParseBy(name, s, sep, parse, func(x T) T { return x })
}

// ParseBy is Parse for values that are told apart by a key, such as
// KEY=VALUE items whose keys may each appear once.
func ParseBy[T any, K comparable](name, s, sep string, parse func(string) (T, error), key func(T) K) ([]T, error) {
	items, err := Split(name, s, sep)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	seen := make(map[K]string, len(items))
	for _, item := range items {
		x, err := parse(item)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		k := key(x)
		if first, dup := seen[k]; dup {
			return nil, repeated(name, s, first, item)
		}
		seen[k] = item
		out = append(out, x)
	}
	return out, nil
}

// Keys splits a list of KEY=VALUE items (sep between them, kv inside
// each, "=" or ":") into keys and values, in order, both trimmed. An empty
// item or a key given twice is an error; canon makes keys that mean the
// same the same (strings.ToLower, or nil for none). An item without kv is
// left with an empty value, for the caller's own message.
func Keys(name, s, sep, kv string, canon func(string) string) (keys, values []string, err error) {
	items, err := Split(name, s, sep)
	if err != nil {
		return nil, nil, err
	}
	seen := make(map[string]bool, len(items))
	for _, item := range items {
		k, v, _ := strings.Cut(item, kv)
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if canon != nil {
			k = canon(k)
		}
		if seen[k] {
			return nil, nil, fmt.Errorf("%s %q: %s given twice", name, s, k)
		}
		seen[k] = true
		keys, values = append(keys, k), append(values, v)
	}
	return keys, values, nil
}

// repeated is the error for item, which means the same as first.
func repeated(name, s, first, item string) error {
	if first == item {
		return fmt.Errorf("%s %q: %s is listed twice", name, s, item)
	}
	return fmt.Errorf("%s %q: %s is listed twice (as %s and as %s)", name, s, item, first, item)
}
