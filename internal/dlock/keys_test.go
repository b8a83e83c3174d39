package dlock_test

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/dlock"
)

// slot is Redis Cluster's key slot, written from the cluster specification:
// CRC16 (XMODEM) of the hash tag if the key has a non-empty one, else of the
// whole key, modulo 16384.
func slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % 16384
}

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func TestCRC16MatchesSpec(t *testing.T) {
	// The reference value from the Redis Cluster specification.
	if got, want := crc16("123456789"), uint16(0x31C3); got != want {
		t.Fatalf("crc16 = %#x, want %#x", got, want)
	}
}

func TestDeriveKeepsSlot(t *testing.T) {
	tests := []struct{ key, want string }{
		{"seckill:{p:42}:lock", "seckill:{p:42}:lock:fence"},
		{"orders", "{orders}:fence"},
		{"a{b", "{a{b}:fence"},
		{"{}", ""}, // rejected by CheckKey, see below
	}
	for _, tt := range tests {
		if tt.want == "" {
			continue
		}
		got := dlock.Derive(tt.key, ":fence")
		if got != tt.want {
			t.Errorf("Derive(%q) = %q, want %q", tt.key, got, tt.want)
		}
		if slot(got) != slot(tt.key) {
			t.Errorf("slot(%q) = %d, slot(%q) = %d", got, slot(got), tt.key, slot(tt.key))
		}
	}
	// Random keys made of the characters that matter, plus plain ones.
	const alphabet = "ab{}:"
	for range 20000 {
		b := []byte(rand.Text()[:1+len(rand.Text())%8])
		for i := range b {
			b[i] = alphabet[int(b[i])%len(alphabet)]
		}
		key := string(b)
		if dlock.CheckKey(key) != nil {
			continue
		}
		for _, suffix := range []string{":fence", ":rel"} {
			if d := dlock.Derive(key, suffix); slot(d) != slot(key) {
				t.Fatalf("Derive(%q, %q) = %q: slot %d, want %d", key, suffix, d, slot(d), slot(key))
			}
		}
	}
}

func TestCheckKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"seckill:{p:42}:lock": true,
		"orders":              true,
		"a{b":                 true,
		"{x}}":                true, // tag "x"
		"":                    false,
		"a}b":                 false,
		"{}x":                 false,
		"{}{x}":               false, // the first '{' starts an empty tag
	} {
		if err := dlock.CheckKey(key); (err == nil) != ok {
			t.Errorf("CheckKey(%q) = %v, want ok=%v", key, err, ok)
		}
	}
}

// companions cuts the fence key and the release channel from one string: they must be
// what derive gives, for keys with and without a hash tag.
func TestCompanionsAreDerived(t *testing.T) {
	for _, key := range []string{"orders", "seckill:{p:42}:lock", "a{b}c", "{x}", "k{}", "日本"} {
		fence, channel := dlock.Companions(key)
		if want := dlock.Derive(key, ":fence"); fence != want {
			t.Errorf("%q: fence key %q, want %q", key, fence, want)
		}
		if want := dlock.Derive(key, ":rel"); channel != want {
			t.Errorf("%q: channel %q, want %q", key, channel, want)
		}
	}
}
