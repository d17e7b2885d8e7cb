package inject

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Spec
		wantErr string
	}{
		{"", nil, ""},
		{"delay=200us", Spec{{Kind: Delay, Min: 200 * time.Microsecond, Max: 200 * time.Microsecond, From: -1, To: -1}}, ""},
		{"delay=0..1ms@link=0-3", Spec{{Kind: Delay, Max: time.Millisecond, From: 0, To: 3}}, ""},
		{"bw=100MB/s@rank=2", Spec{{Kind: Bandwidth, Rate: 100e6, From: 2, To: -1}}, ""},
		{"bw=8Gbit/s", Spec{{Kind: Bandwidth, Rate: 1e9, From: -1, To: -1}}, ""},
		{"slow=5ms@rank=1", Spec{{Kind: Slow, Min: 5 * time.Millisecond, Max: 5 * time.Millisecond, From: 1, To: -1}}, ""},
		{"fail=op:17; corrupt=p:0.01", Spec{{Kind: Fail, Call: 17, From: -1, To: -1}, {Kind: Corrupt, Prob: 0.01, From: -1, To: -1}}, ""},
		{"bogus=1", nil, "unknown fault"},
		{"delay", nil, "KIND=VALUE"},
		{"delay=soon", nil, "duration"},
		{"delay=2ms..1ms", nil, "backwards"},
		{"slow=1ms", nil, "@rank"},
		{"slow=1ms..2ms@rank=1", nil, "one duration"},
		{"bw=fast", nil, "rate"},
		{"bw=1e-300MB/s", nil, "want 1B/s to 1000TB/s"},
		{"bw=2e15B/s", nil, "want 1B/s to 1000TB/s"},
		{"bw=NaNMB/s", nil, "rate"},
		{"delay=200000h", nil, "limit of 168h"},
		{"delay=9999999999h", nil, "limit of 168h"},
		{"slow=-1s@rank=1", nil, "negative"},
		{"fail=op:0", nil, "call number"},
		{"fail=p:1.5", nil, "probability"},
		{"corrupt=sometimes", nil, "op:N or p:P"},
		{"delay=1ms@link=2-2", nil, "two different ranks"},
		{"delay=1ms@node=1", nil, "scope"},
		{"delay=1ms;delay=2ms", nil, `delay is given twice for the same messages (as delay=1ms and as delay=2ms)`},
		{"bw=1MB/s@rank=2;bw=2MB/s@rank=2", nil, `bw@rank=2 is given twice`},
		{"slow=1ms@rank=1; slow=2ms@rank=1", nil, `slow@rank=1 is given twice`},
		{"fail=p:0.1;fail=p:0.2", nil, `fail is given twice`},
		{"corrupt=op:3@link=0-1;corrupt=op:3@link=0-1", nil, `corrupt=op:3@link=0-1 is listed twice`},
		{"delay=1ms;delay=1ms@rank=1", Spec{{Kind: Delay, Min: time.Millisecond, Max: time.Millisecond, From: -1, To: -1},
			{Kind: Delay, Min: time.Millisecond, Max: time.Millisecond, From: 1, To: -1}}, ""},
		{"fail=op:3;fail=op:5", Spec{{Kind: Fail, Call: 3, From: -1, To: -1}, {Kind: Fail, Call: 5, From: -1, To: -1}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("fault %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	spec, _ := Parse("delay=1ms@rank=4")
	if err := spec.Validate(4, true); err == nil || !strings.Contains(err.Error(), "4 (want 0 to 3)") {
		t.Errorf("rank 4 of 4: %v, want an error naming the rank and the range", err)
	}
	spec, _ = Parse("corrupt=p:0.5")
	if err := spec.Validate(4, false); err == nil || !strings.Contains(err.Error(), "-c 1") {
		t.Errorf("corruption without the check: %v", err)
	}
}

// TestFaultString: a fault written back in Grammar's form (as errors name
// it) parses to the same fault.
func TestFaultString(t *testing.T) {
	for _, in := range []string{"delay=200µs", "delay=0s..1ms@link=0-3", "bw=100MB/s@rank=2", "slow=5ms@rank=1",
		"fail=op:17", "fail=p:0.25@link=1-0", "corrupt=op:3@rank=2", "corrupt=p:0.01"} {
		spec, err := Parse(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out := spec[0].String()
		again, err := Parse(out)
		if err != nil || len(again) != 1 || again[0] != spec[0] {
			t.Errorf("%s: written %q, read back %+v (%v), want %+v", in, out, again, err, spec[0])
		}
	}
}
