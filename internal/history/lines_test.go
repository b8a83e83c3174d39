package history_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/history"
)

func TestLinesRoundTrip(t *testing.T) {
	ops := []history.Purchase{pur(1, 201, "", 0, 10), pur(2, 0, "", 5, -1), pur(3, 409, soldOut, 20, 25)}
	ops[0].Order, ops[0].Process = 7, "api-1"
	var b bytes.Buffer
	if err := history.WriteLines(&b, ops); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(b.String(), "\n"), len(ops); got != want {
		t.Fatalf("%d lines, want %d:\n%s", got, want, b.String())
	}
	if strings.Contains(b.String(), `"complete":"0001`) {
		t.Errorf("a purchase with no answer has a completion time:\n%s", b.String())
	}
	got, err := history.ReadLines[history.Purchase](&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ops) {
		t.Fatalf("read %+v, want %+v", got, ops)
	}
	locks := []history.LockOp{lop("a", history.Grant, "ta", history.OK, 0, 1)}
	b.Reset()
	if err := history.WriteLines(&b, locks); err != nil {
		t.Fatal(err)
	}
	if back, err := history.ReadLines[history.LockOp](&b); err != nil || !reflect.DeepEqual(back, locks) {
		t.Fatalf("read %+v, %v; want %+v", back, err, locks)
	}
}

func TestReadLinesSaysWhichLine(t *testing.T) {
	_, err := history.ReadLines[history.Purchase](strings.NewReader("{\"product\":1}\n\n{oops\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("ReadLines = %v, want an error on line 3", err)
	}
}
