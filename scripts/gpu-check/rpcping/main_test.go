package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// fakeServer answers rpcping's commands over conn as a protocol 8.0.0
// server would, with the faults named by fault.
func fakeServer(t *testing.T, conn net.Conn, fault string) {
	defer conn.Close()
	le := binary.LittleEndian
	reply := func(p []byte) {
		if fault == "short size" && len(p) == 4 {
			p = p[:3]
		}
		conn.Write(append(le.AppendUint64(nil, uint64(len(p))), p...))
	}
	var fill byte
	for {
		var hdr [9]byte
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			return
		}
		p := make([]byte, le.Uint64(hdr[1:]))
		if _, err := io.ReadFull(conn, p); err != nil {
			return
		}
		switch hdr[0] {
		case cmdHello:
			v := byte(8)
			if fault == "old protocol" {
				v = 3
			}
			reply(append([]byte{v, 0, 0, 0}, make([]byte, connCapsSize)...))
		case cmdDeviceCount:
			reply(le.AppendUint32(nil, 1))
		case cmdGetDeviceMemory:
			reply(le.AppendUint64(le.AppendUint64(nil, 1<<30), 2<<30))
		case cmdGetAlignment, cmdGetMaxSize:
			reply(le.AppendUint64(nil, 128))
		case cmdAllocBuffer:
			reply(le.AppendUint64(le.AppendUint64(nil, 7), le.Uint64(p[4:])))
		case cmdBufferGetBase:
			reply(le.AppendUint64(nil, 1<<32))
		case cmdBufferClear:
			fill = p[8]
			if fault == "clear lost" {
				fill = 0
			}
		case cmdGetTensor:
			if len(p) != tensorSize+16 || le.Uint64(p[12:]) != 7 || le.Uint64(p[220:]) != 1<<32 || le.Uint32(p[8:]) != typeI8 {
				t.Errorf("GET_TENSOR request %x", p)
				return
			}
			reply(bytes.Repeat([]byte{fill}, int(le.Uint64(p[tensorSize+8:]))))
		case cmdFreeBuffer:
		default:
			t.Errorf("unexpected command %d", hdr[0])
			return
		}
	}
}

func TestPing(t *testing.T) {
	for _, tc := range []struct {
		fault string
		want  string // "" for success, else a substring of the error
	}{
		{"", ""},
		{"old protocol", "HELLO: protocol 3.0.0, want 8.x"},
		{"short size", "DEVICE_COUNT: reply of 3 bytes, want 4"},
		{"clear lost", "GET_TENSOR: byte 0 = 0x0 after BUFFER_CLEAR 0x5a"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			go fakeServer(t, b, tc.fault)
			var out strings.Builder
			err := ping(a, &out, 0, 4096)
			if tc.want == "" {
				if err != nil || !strings.Contains(out.String(), "free: ok") {
					t.Fatalf("ping: %v\n%s", err, out.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errReply) {
				t.Fatalf("ping = %v, want an errReply containing %q", err, tc.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"1", 1}, {"4K", 4096}, {"1M", 1 << 20}, {"1G", 1 << 30},
		{"", 0}, {"0", 0}, {"2G", 0}, {"1.5M", 0}, {"M", 0}, {"-1", 0}, {"18446744073709551615K", 0},
	} {
		got, err := parseSize(tc.in)
		if got != tc.want || (err == nil) != (tc.want != 0) {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseSize: no input panics or yields a size outside 1..1 GiB.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1M", "4K", "", "99999999999999999999G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := parseSize(s); err == nil && (v == 0 || v > maxReply) {
			t.Fatalf("parseSize(%q) = %d", s, v)
		}
	})
}
