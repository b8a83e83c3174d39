package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeCeiling: the ceiling says its address, answers a purchase 409, and stops when its
// stdin closes.
func TestServeCeiling(t *testing.T) {
	t.Parallel()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveCeiling(context.Background(), "127.0.0.1:0", stdinR, stdoutW) }()
	addr, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+strings.TrimSpace(addr)+"/api/v1/products/1/purchase", "application/json", strings.NewReader(`{"user_id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("purchase: status %d, want 409", resp.StatusCode)
	}
	stdinW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serveCeiling = %v after stdin closed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serveCeiling still serving 10s after stdin closed")
	}
}
