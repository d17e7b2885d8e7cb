package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/internal/listarg"
	"github.com/hccl-test/hccl-test/world"
)

// hcclRetry is operator re-execution as HCCL's environment configures it.
type hcclRetry struct {
	enabled        bool
	max            int
	hold, interval time.Duration
	source         string
}

// HCCL's defaults when HCCL_OP_RETRY_ENABLE turns re-execution on and
// HCCL_OP_RETRY_PARAMS does not say otherwise.
const (
	hcclRetryMax      = 1
	hcclRetryHold     = 5000 * time.Millisecond
	hcclRetryInterval = 1000 * time.Millisecond
)

// parseHCCLRetry reads HCCL_OP_RETRY_ENABLE ("L0:0, L1:1, L2:0": a level
// set to 1 turns re-execution on; HCCL retries the levels it supports, and
// hccl-test, with one level of links, retries everything) and
// HCCL_OP_RETRY_PARAMS ("MaxCnt:3,HoldTime:5000,IntervalTime:1000",
// times in milliseconds), with HCCL's ranges and defaults. Each is checked
// whenever it is set, and PARAMS applies when ENABLE turns re-execution on.
func parseHCCLRetry(getenv func(string) string) (hcclRetry, error) {
	r := hcclRetry{max: hcclRetryMax, hold: hcclRetryHold, interval: hcclRetryInterval}
	if enable := getenv("HCCL_OP_RETRY_ENABLE"); strings.TrimSpace(enable) != "" {
		levels, vals, err := listarg.Keys("HCCL_OP_RETRY_ENABLE", enable, ",", ":", strings.ToUpper)
		if err != nil {
			return r, err
		}
		for i, level := range levels {
			val := vals[i]
			if len(level) != 2 || level[0] != 'L' || level[1] < '0' || level[1] > '2' || (val != "0" && val != "1") {
				return r, fmt.Errorf("HCCL_OP_RETRY_ENABLE=%q: want levels as L0:0,L1:1,L2:0 (each 0 or 1)", enable)
			}
			r.enabled = r.enabled || val == "1"
		}
		r.source = "HCCL_OP_RETRY_ENABLE=" + enable
	}
	params := getenv("HCCL_OP_RETRY_PARAMS")
	if strings.TrimSpace(params) == "" {
		return r, nil
	}
	p, err := parseRetryParams(r, params)
	if err != nil || !r.enabled {
		return r, err
	}
	p.source += " HCCL_OP_RETRY_PARAMS=" + params
	return p, nil
}

// parseRetryParams reads params, HCCL_OP_RETRY_PARAMS, over r.
func parseRetryParams(r hcclRetry, params string) (hcclRetry, error) {
	bad := func(why string) (hcclRetry, error) {
		return r, fmt.Errorf("HCCL_OP_RETRY_PARAMS=%q: %s (want MaxCnt:1..10,HoldTime:0..60000,IntervalTime:0..60000, times in ms)", params, why)
	}
	keys, vals, err := listarg.Keys("HCCL_OP_RETRY_PARAMS", params, ",", ":", nil)
	if err != nil {
		return r, err
	}
	for i, key := range keys {
		n, err := strconv.ParseUint(vals[i], 10, 32)
		if err != nil {
			item := key
			if vals[i] != "" {
				item += ":" + vals[i]
			}
			return bad(fmt.Sprintf("%q is not NAME:number", item))
		}
		switch key {
		case "MaxCnt":
			if n < 1 || n > world.MaxRetry {
				return bad(fmt.Sprintf("MaxCnt %d out of range", n))
			}
			r.max = int(n)
		case "HoldTime", "IntervalTime":
			d := time.Duration(n) * time.Millisecond
			if d > world.MaxRetryPause {
				return bad(fmt.Sprintf("%s %d out of range", key, n))
			}
			if key == "HoldTime" {
				r.hold = d
			} else {
				r.interval = d
			}
		default:
			return bad(fmt.Sprintf("unknown parameter %q", key))
		}
	}
	return r, nil
}
