package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/testenv"
)

// TestWriteTimeoutFitsPurchase: the server's write timeout holds the worst purchase's answer
// (the body's read, the rate limit check, PURCHASE_TIMEOUT, then COMMIT and its settling): by
// default it is derived from PURCHASE_TIMEOUT, and a WRITE_TIMEOUT it cannot hold is refused.
func TestWriteTimeoutFitsPurchase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		purchase, write string
		want            time.Duration // 0: refused
	}{
		{"", "", 35 * time.Second},    // 10s + 2s + 10s + 10s + 3s
		{"15s", "", 40 * time.Second}, // PURCHASE_TIMEOUT at its most
		{"1s", "", 26 * time.Second},
		{"10s", "60s", 60 * time.Second},
		{"10s", "35s", 35 * time.Second},
		{"10s", "30s", 0}, // the old fixed write timeout: a committed 201 could be cut off
		{"15s", "39s", 0},
		{"10s", "soon", 0},
	}
	for _, tt := range tests {
		cfg, err := parseEnv(map[string]string{"PURCHASE_TIMEOUT": tt.purchase, "WRITE_TIMEOUT": tt.write})
		switch {
		case tt.want == 0 && (err == nil || !strings.Contains(err.Error(), "WRITE_TIMEOUT")):
			t.Errorf("PURCHASE_TIMEOUT %q, WRITE_TIMEOUT %q: err %v, want one naming WRITE_TIMEOUT", tt.purchase, tt.write, err)
		case tt.want != 0 && (err != nil || cfg.writeTimeout != tt.want):
			t.Errorf("PURCHASE_TIMEOUT %q, WRITE_TIMEOUT %q: write timeout %s, err %v; want %s", tt.purchase, tt.write, cfg.writeTimeout, err, tt.want)
		}
	}
}

// TestShutdownWaitsForPurchases: SIGTERM waits, by default, as long as a purchase in flight may
// take to be answered (the write timeout), not a fixed 15 s that a purchase whose COMMIT was
// slow and then settled could outlast; an explicit SHUTDOWN_TIMEOUT is kept (a shorter one is
// logged at start).
func TestShutdownWaitsForPurchases(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		purchase, shutdown string
		want               time.Duration
	}{
		{"", "", 35 * time.Second},
		{"15s", "", 40 * time.Second},
		{"", "5s", 5 * time.Second},
	} {
		cfg, err := parseEnv(map[string]string{"PURCHASE_TIMEOUT": tt.purchase, "SHUTDOWN_TIMEOUT": tt.shutdown})
		if err != nil || cfg.shutdownTimeout != tt.want || tt.shutdown == "" && cfg.shutdownTimeout != cfg.writeTimeout {
			t.Errorf("PURCHASE_TIMEOUT %q, SHUTDOWN_TIMEOUT %q: shutdown timeout %s (write timeout %s), %v; want %s",
				tt.purchase, tt.shutdown, cfg.shutdownTimeout, cfg.writeTimeout, err, tt.want)
		}
	}
}

// TestSlowPurchaseAnswered runs the real server: a purchase whose body arrives 9 s after its
// headers (ReadTimeout is 10 s) and whose COMMIT takes 4 s (a deferred trigger sleeps in it)
// is answered 201, on the connection, with its order: the write timeout, counted from the
// headers, leaves room for both.
func TestSlowPurchaseAnswered(t *testing.T) {
	t.Parallel()
	dsn := testenv.Schema(t)
	const token = "answer-budget-token-0123"
	run := startAPI(t, map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": testenv.RedisAddr(t),
		"ADMIN_TOKEN": token, "PURCHASE_TIMEOUT": "1s"})
	ctx := context.Background()
	p, err := client.New(run.base, &client.Options{AdminToken: token}).CreateProduct(ctx, api.NewProduct{Name: "slow", Stock: new(1)})
	if err != nil {
		t.Fatal(err)
	}
	gdb := testenv.DB(t, dsn)
	for _, sql := range []string{
		`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(4); RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON orders DEFERRABLE INITIALLY DEFERRED
			FOR EACH ROW EXECUTE FUNCTION slow_commit()`,
	} {
		if err := gdb.Exec(sql).Error; err != nil {
			t.Fatal(err)
		}
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(run.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"user_id":7}`
	if _, err := fmt.Fprintf(conn, "POST /api/v1/products/%d/purchase HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		p.ID, len(body)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(9 * time.Second)
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a purchase with a slow body and a slow COMMIT: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("purchase = %d %s, want 201", resp.StatusCode, b)
	}
	var n int64
	if err := gdb.Raw(`SELECT count(*) FROM orders WHERE product_id = ? AND user_id = 7`, p.ID).Scan(&n).Error; err != nil || n != 1 {
		t.Fatalf("orders of the buyer answered 201: %d, %v", n, err)
	}
}
