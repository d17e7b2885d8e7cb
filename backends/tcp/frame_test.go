package tcp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// sampleHeader has a distinct value in every field, so that a field written
// to the wrong offset shows up.
var sampleHeader = Header{Kind: KindData, Op: 0x11, DType: 0x22, Call: 0x0807060504030201, Seq: 0x1817161514131211, Len: 0xfe24232221}

// sampleBytes is sampleHeader encoded by hand from the layout in frame.go.
var sampleBytes = []byte{
	'H', 'T', 2, 1, 0x11, 0x22, 0, 0,
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
	0x21, 0x22, 0x23, 0x24, 0xfe, 0x00, 0x00, 0x00,
}

func TestHeaderLayout(t *testing.T) {
	var b [HeaderSize]byte
	sampleHeader.Put(b[:])
	if !bytes.Equal(b[:], sampleBytes) {
		t.Fatalf("Put wrote\n% x\nwant\n% x", b[:], sampleBytes)
	}
	h, err := ParseHeader(sampleBytes)
	if err != nil {
		t.Fatal(err)
	}
	if h != sampleHeader {
		t.Fatalf("ParseHeader = %+v, want %+v", h, sampleHeader)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		h    Header
	}{
		{"zero data", Header{Kind: KindData}},
		{"hello", Header{Kind: KindHello, Len: 27}},
		{"proof", Header{Kind: KindProof, Seq: 1, Len: 32}},
		{"table", Header{Kind: KindTable, Len: 4096}},
		{"control", Header{Kind: KindControl, Len: 20}},
		{"data all fields", sampleHeader},
		{"max fields", Header{Kind: KindTable, Op: 0xff, DType: 0xff, Call: ^uint64(0), Seq: ^uint64(0), Len: MaxPayload}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Trailing bytes after the header must be ignored.
			b := make([]byte, HeaderSize+3)
			tt.h.Put(b)
			got, err := ParseHeader(b)
			if err != nil || got != tt.h {
				t.Fatalf("ParseHeader = %+v, %v; want %+v", got, err, tt.h)
			}
			var buf [HeaderSize]byte
			got, err = ReadHeader(bytes.NewReader(b), &buf)
			if err != nil || got != tt.h {
				t.Fatalf("ReadHeader = %+v, %v; want %+v", got, err, tt.h)
			}
		})
	}
}

func TestParseHeaderRejects(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(b []byte) []byte
		want    string // in the error message
	}{
		{"short buffer", func(b []byte) []byte { return b[:HeaderSize-1] }, "31 bytes, need 32"},
		{"empty buffer", func(b []byte) []byte { return nil }, "0 bytes, need 32"},
		{"magic first byte", func(b []byte) []byte { b[0] = 'X'; return b }, "magic"},
		{"magic second byte", func(b []byte) []byte { b[1] = 'X'; return b }, "magic"},
		{"version 0", func(b []byte) []byte { b[2] = 0; return b }, "peer speaks protocol version 0, this build speaks 2"},
		{"version 7", func(b []byte) []byte { b[2] = 7; return b }, "peer speaks protocol version 7, this build speaks 2"},
		{"kind 0", func(b []byte) []byte { b[3] = 0; return b }, "unknown kind 0"},
		{"kind 7", func(b []byte) []byte { b[3] = 7; return b }, "unknown kind 7"},
		{"kind 255", func(b []byte) []byte { b[3] = 255; return b }, "unknown kind 255"},
		{"reserved byte 6", func(b []byte) []byte { b[6] = 1; return b }, "reserved"},
		{"reserved byte 7", func(b []byte) []byte { b[7] = 0x80; return b }, "reserved"},
		{"len MaxPayload+1", func(b []byte) []byte { b[24] = 1; return b }, "limit is 1099511627776"},
		{"len 2^63", func(b []byte) []byte { b[31] = 0x80; return b }, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := make([]byte, HeaderSize)
			Header{Kind: KindData, Len: MaxPayload}.Put(b)
			_, err := ParseHeader(tt.corrupt(b))
			if !errors.Is(err, ErrBadFrame) {
				t.Fatalf("err = %v, want ErrBadFrame", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestReadHeaderErrors(t *testing.T) {
	full := make([]byte, HeaderSize)
	Header{Kind: KindHello, Len: 27}.Put(full)
	boom := errors.New("boom")
	tests := []struct {
		name      string
		r         io.Reader
		truncated bool   // want ErrTruncated
		is        error  // want errors.Is(err, is)
		want      string // in the error message
	}{
		{"1 of 32", bytes.NewReader(full[:1]), true, io.ErrUnexpectedEOF, "got 1 of 32 header bytes"},
		{"31 of 32", bytes.NewReader(full[:31]), true, io.ErrUnexpectedEOF, "got 31 of 32 header bytes"},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(full[:20])), true, io.ErrUnexpectedEOF, "got 20 of 32"},
		{"error after 5", io.MultiReader(bytes.NewReader(full[:5]), iotest.ErrReader(boom)), true, boom, "got 5 of 32"},
		{"error before any byte", iotest.ErrReader(boom), false, boom, "boom"},
		{"full header with EOF", iotest.DataErrReader(bytes.NewReader(full)), false, nil, ""},
		{"bad magic, then stall", io.MultiReader(strings.NewReader("HX"), iotest.ErrReader(boom)), false, ErrBadFrame, "magic"},
		{"bad first byte alone", iotest.OneByteReader(io.MultiReader(strings.NewReader("X"), iotest.ErrReader(boom))), false, ErrBadFrame, "magic"},
		{"version 3, then stall", io.MultiReader(strings.NewReader("HT\x03"), iotest.ErrReader(boom)), false, ErrBadFrame, "protocol version 3"},
		{"version 1 byte by byte", iotest.OneByteReader(io.MultiReader(strings.NewReader("HT\x01"), iotest.ErrReader(boom))), false, ErrBadFrame, "protocol version 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf [HeaderSize]byte
			_, err := ReadHeader(tt.r, &buf)
			if tt.is == nil {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if got := errors.Is(err, ErrTruncated); got != tt.truncated {
				t.Fatalf("err = %v; ErrTruncated %v, want %v", err, got, tt.truncated)
			}
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one wrapping %v and mentioning %q", err, tt.is, tt.want)
			}
		})
	}
}

func TestReadHeaderCleanClose(t *testing.T) {
	var buf [HeaderSize]byte
	if _, err := ReadHeader(bytes.NewReader(nil), &buf); err != io.EOF {
		t.Fatalf("err = %v, want io.EOF itself", err)
	}
}

func TestReadPayload(t *testing.T) {
	data := []byte("0123456789")
	tests := []struct {
		name string
		r    io.Reader
		n    int
		want string // "" for success, else in the error message
	}{
		{"exact", bytes.NewReader(data), 10, ""},
		{"prefix", bytes.NewReader(data), 4, ""},
		{"empty", bytes.NewReader(nil), 0, ""},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(data)), 10, ""},
		{"short", bytes.NewReader(data[:3]), 8, "got 3 of 8 payload bytes"},
		{"nothing", bytes.NewReader(nil), 8, "got 0 of 8 payload bytes"},
		{"error", io.MultiReader(bytes.NewReader(data[:2]), iotest.ErrReader(errors.New("reset"))), 8, "got 2 of 8 payload bytes: reset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]byte, tt.n)
			err := ReadPayload(tt.r, dst)
			if tt.want == "" {
				if err != nil || !bytes.Equal(dst, data[:tt.n]) {
					t.Fatalf("ReadPayload = %v, dst %q; want nil, %q", err, dst, data[:tt.n])
				}
				return
			}
			if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrTruncated mentioning %q", err, tt.want)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindData: "data", KindHello: "hello", KindProof: "proof", KindTable: "table", KindAbort: "abort", KindControl: "control", 0: "Kind(0)", 9: "Kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
}

// FuzzParseHeader checks that ParseHeader never panics, rejects only with
// ErrBadFrame, and accepts only what Put writes back byte for byte: no two
// encodings decode to the same header, and nothing is silently dropped.
func FuzzParseHeader(f *testing.F) {
	for _, h := range []Header{
		{Kind: KindData},
		{Kind: KindHello, Len: 27},
		{Kind: KindProof, Seq: 1, Len: 32},
		{Kind: KindTable, Len: 1 << 16},
		sampleHeader,
		{Kind: KindData, Op: 0xff, DType: 0xff, Call: ^uint64(0), Seq: ^uint64(0), Len: MaxPayload},
	} {
		b := make([]byte, HeaderSize)
		h.Put(b)
		f.Add(b)
		f.Add(append(b, 0xee)) // trailing bytes
		for _, i := range []int{0, 2, 3, 6, 7, 28} {
			c := bytes.Clone(b)
			c[i] ^= 0x40
			f.Add(c)
		}
		f.Add(b[:HeaderSize-1])
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := ParseHeader(in)
		if err != nil {
			if !errors.Is(err, ErrBadFrame) {
				t.Fatalf("rejection %v does not wrap ErrBadFrame", err)
			}
			return
		}
		if !h.Kind.known() || h.Len > MaxPayload {
			t.Fatalf("accepted invalid header %+v", h)
		}
		var out [HeaderSize]byte
		h.Put(out[:])
		if !bytes.Equal(out[:], in[:HeaderSize]) {
			t.Fatalf("Put(ParseHeader(in)) =\n% x\nin =\n% x", out[:], in[:HeaderSize])
		}
	})
}
