package main

import (
	"strings"
	"testing"
	"time"
)

// TestSoldOutSettings: SOLDOUT_LEASE and SOLDOUT_HOLD default to 200ms and 10s, reach the
// app, and a lease too short to confirm, or a hold shorter than four leases, is refused.
func TestSoldOutSettings(t *testing.T) {
	cfg := mustParseEnv(t, map[string]string{})
	if cfg.soldOut.Lease != 200*time.Millisecond || cfg.soldOut.Hold != 10*time.Second {
		t.Errorf("defaults: %+v, want lease 200ms and hold 10s", cfg.soldOut)
	}
	cfg = mustParseEnv(t, map[string]string{"SOLDOUT_LEASE": "1s", "SOLDOUT_HOLD": "30s"})
	if cfg.soldOut.Lease != time.Second || cfg.soldOut.Hold != 30*time.Second {
		t.Errorf("set: %+v, want lease 1s and hold 30s", cfg.soldOut)
	}
	for _, tt := range []struct{ lease, hold, want string }{
		{"5ms", "10s", "SOLDOUT_LEASE"},
		{"1s", "3s", "SOLDOUT_HOLD"},
		{"200ms", "500ms", "SOLDOUT_HOLD"},
	} {
		_, err := parseEnv(map[string]string{"SOLDOUT_LEASE": tt.lease, "SOLDOUT_HOLD": tt.hold})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SOLDOUT_LEASE %s, SOLDOUT_HOLD %s: err %v, want one naming %s", tt.lease, tt.hold, err, tt.want)
		}
	}
}

// TestControlLeaseSetting: CONTROL_LEASE defaults to inventory's ControlLease (1s), reaches
// the config, and a lease under 10ms is refused.
func TestControlLeaseSetting(t *testing.T) {
	if cfg := mustParseEnv(t, map[string]string{}); cfg.controlLease != time.Second {
		t.Errorf("default: %v, want 1s", cfg.controlLease)
	}
	if cfg := mustParseEnv(t, map[string]string{"CONTROL_LEASE": "250ms"}); cfg.controlLease != 250*time.Millisecond {
		t.Errorf("set: %v, want 250ms", cfg.controlLease)
	}
	if _, err := parseEnv(map[string]string{"CONTROL_LEASE": "5ms"}); err == nil || !strings.Contains(err.Error(), "CONTROL_LEASE") {
		t.Errorf("CONTROL_LEASE 5ms: err %v, want one naming it", err)
	}
}
