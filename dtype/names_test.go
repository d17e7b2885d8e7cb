package dtype

import (
	"strings"
	"testing"
)

// TestNamesRoundTrip checks that every type's and operator's String is a
// name that --datatype and --redop accept (Parse, ParseOp) for the same
// value, in any case.
func TestNamesRoundTrip(t *testing.T) {
	for _, d := range All() {
		for _, s := range []string{d.String(), strings.ToUpper(d.String())} {
			if got, err := Parse(s); err != nil || got != d {
				t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, d)
			}
		}
	}
	for _, o := range AllOps() {
		for _, s := range []string{o.String(), strings.ToUpper(o.String())} {
			if got, err := ParseOp(s); err != nil || got != o {
				t.Errorf("ParseOp(%q) = %v, %v; want %v", s, got, err, o)
			}
		}
	}
}

// TestAliases checks the other tools' spellings of the types.
func TestAliases(t *testing.T) {
	tests := map[string]DType{
		"half": FP16, "bfloat16": BF16, "bfp16": BF16, "float": FP32, "double": FP64,
		"f8e4m3": F8E4M3, "f8e5m2": F8E5M2, // nccl-tests
		"fp8e4m3": F8E4M3, "FP8E5M2": F8E5M2, // hccl_test
		"float8_e4m3fn": F8E4M3, "float8_e5m2": F8E5M2, // PyTorch
	}
	for s, want := range tests {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if got, err := ParseOp("mulsum"); err != nil || got != MulSum {
		t.Errorf("ParseOp(mulsum) = %v, %v", got, err)
	}
	if _, err := Parse("fp8"); err == nil {
		t.Errorf("Parse(fp8) accepted a name that does not say which fp8")
	}
}
