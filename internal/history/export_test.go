package history

import (
	"testing"
	"time"
)

// SearchOnly turns off the counts before the search and the reads settled without it, for
// the rest of the test: porcupine alone decides every operation.
func SearchOnly(t testing.TB) {
	counts = func([]*buy, map[int64]int) []string { return nil }
	settling = func(buys []*buy, _ map[int64]int) ([]*buy, int) { return buys, 0 }
	t.Cleanup(func() { counts, settling = refute, settle })
}

// CheckPurchasesSearchOnly is CheckPurchases with porcupine alone deciding. Not for parallel
// tests.
func CheckPurchasesSearchOnly(ops []Purchase, sale Sale, timeout time.Duration, dir string) (Result, error) {
	counts = func([]*buy, map[int64]int) []string { return nil }
	settling = func(buys []*buy, _ map[int64]int) ([]*buy, int) { return buys, 0 }
	defer func() { counts, settling = refute, settle }()
	return CheckPurchases(ops, sale, timeout, dir)
}
