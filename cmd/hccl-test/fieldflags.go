package main

import "github.com/hccl-test/hccl-test/fielderr"

// fieldFlags is how the command line sets each field of bench.Plan that an
// error may name: bench and world name fields (fielderr.FieldError), and every error
// the command prints shows them as these flags (oneLine), so that a
// refusal reads "--maxbytes 2097152: ..." as the user typed it. A field
// missing here is shown by its Go name (TestFieldFlagsCoverPlan keeps the
// table whole).
var fieldFlags = map[fielderr.Field]string{
	// World
	"Backend":        "--backend",
	"Ranks":          "--ranks",
	"PerProcess":     "--nthreads",
	"Master":         "--master",
	"Bind":           "--bind",
	"ConnectTimeout": "--connect-timeout",
	"Timeout":        "--timeout",
	// Sweep
	"Ops":        "--op",
	"DTypes":     "--datatype",
	"RedOps":     "--redop",
	"MinBytes":   "--minbytes",
	"MaxBytes":   "--maxbytes",
	"StepFactor": "--stepfactor",
	"StepBytes":  "--stepbytes",
	"StepsSet":   "--stepbytes",
	"Runs":       "--runs",
	"Iters":      "--iters",
	"BenchTime":  "--benchtime",
	// --warmup_iters, as nccl-tests spells it; --warmup-iters is the same
	// flag.
	"Warmup":     "--warmup_iters",
	"Check":      "--check",
	"Root":       "--root",
	"Algo":       "--algo",
	"OpAlgos":    "HCCL_ALGO",
	"Placements": "--placement",
	"Cache":      "--cache",
	// Faults
	"Inject":        "--inject",
	"InjectText":    "--inject",
	"Seed":          "--seed",
	"Retry":         "--retry",
	"RetryHold":     "--retry-hold",
	"RetryInterval": "--retry-interval",
	// Domains
	"Layout":       "--groups",
	"LayoutText":   "--groups",
	"Groups":       "--group",
	"Topology":     "--topology",
	"TopologyAuto": "--topology auto",
	"Fusion":       "--fusion",
	"Traffic":      "--traffic",
	"Overlap":      "--overlap",
	"OverlapAuto":  "--overlap auto",
	// Links
	"LinkGBps":      "--link-bw",
	"LinkInterGBps": "--link-bw inter=",
	// NoPayload: the flag of the backend that can run without payload
	// (ownFieldFlags: sim's --sim-data=false).
	// Outputs
	"Stats":        "--stats",
	"Cycles":       "-N",
	"Timestamps":   "-S",
	"ReportMemory": "-M",
	"MinBusBW":     "NCCL_TESTS_MIN_BW",
	"RankSummary":  "NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY",
	// Method: nccl-tests' spellings, as --warmup_iters.
	"Average":    "--average",
	"AggIters":   "--agg_iters",
	"Blocking":   "--blocking",
	"CPUTime":    "--report_cputime",
	"CheckIters": "--check",
	"Unalign":    "--unalign",
}

// fieldShortFlags is the short form of the flags that have one, for the
// hints that name a field by it (fielderr.ShortField): "use a smaller -e".
var fieldShortFlags = map[fielderr.Field]string{
	"MaxBytes": "-e",
	"Iters":    "-n",
}

// fieldFlag returns the flag that sets field, or "" for a field the
// command line does not set: a field of the plan (fieldFlags) or of a
// backend's own options (ownFieldFlags).
func fieldFlag(field fielderr.Field) string {
	if f, ok := fieldFlags[field]; ok {
		return f
	}
	return ownFieldFlags()[field]
}

// fieldShortFlag returns the short form of the flag that sets field, or ""
// for a field whose flag has none.
func fieldShortFlag(field fielderr.Field) string { return fieldShortFlags[field] }

// flagText returns err's text with the fields its fielderr.FieldErrors name
// shown as their flags, and those a hint names by a short form
// (fielderr.ShortField) as that.
func flagText(err error) string {
	return fielderr.FormatFields(err, fielderr.Names{Long: fieldFlag, Short: fieldShortFlag})
}
