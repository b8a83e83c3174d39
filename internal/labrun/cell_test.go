package labrun

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// TestJudge: the verdicts the lab can give, each from the audit it would see, and that a
// cell is OK only when its verdict is the expected one: a broken lock whose flaw did not show
// fails as much as a safe lock that oversold.
func TestJudge(t *testing.T) {
	end := time.Now()
	for _, tc := range []struct {
		name                  string
		initial, stock, order int
		lastSale              time.Time
		want                  string
		oversold              int
	}{
		{"sold out exactly", 10, 0, 10, end, Safe, 0},
		{"more orders than stock", 10, 0, 13, end, Oversold, 3},
		{"lost updates, stock left", 10, 4, 8, end, Oversold, 2},
		{"stock left, nothing sold of late", 10, 7, 3, end.Add(-stallAfter), Stalled, 0},
		{"stock left, still selling", 10, 2, 8, end.Add(-time.Second), Unfinished, 0},
	} {
		c := Cell{InitialStock: tc.initial, Stock: tc.stock, Orders: tc.order}
		judge(&c, tc.lastSale, end)
		if c.Verdict != tc.want || (tc.want == Oversold && c.Oversold != tc.oversold) {
			t.Errorf("%s: verdict %s, oversold %d; want %s, %d", tc.name, c.Verdict, c.Oversold, tc.want, tc.oversold)
		}
		c.Expected = tc.want
		if !c.OK() {
			t.Errorf("%s: not OK although as expected", tc.name)
		}
		c.Expected = Safe
		if tc.want != Safe && c.OK() {
			t.Errorf("%s: OK although expected safe", tc.name)
		}
	}
}

// TestExpectedCoversEveryCell: every lab lock and scenario has an expected result, the short
// matrix names only real cells, and every broken lock shows a flaw in it.
func TestExpectedCoversEveryCell(t *testing.T) {
	for _, l := range inventory.LabLocks {
		for _, s := range Scenarios {
			if v := Expected[l][s.Name]; v != Safe && v != Oversold && v != Stalled {
				t.Errorf("%s × %s: expected %q", l, s.Name, v)
			}
		}
	}
	inShort := map[string]bool{}
	for _, p := range ShortCells() {
		if _, ok := scenario(p.Scenario); !ok || Expected[p.Lock] == nil {
			t.Errorf("short cell %v is not in the matrix", p)
		}
		if Expected[p.Lock][p.Scenario] != Safe {
			inShort[p.Lock] = true
		}
	}
	for _, l := range inventory.LabLocks {
		broken := false
		for _, v := range Expected[l] {
			broken = broken || v != Safe
		}
		if broken && !inShort[l] {
			t.Errorf("%s's flaw is not in the short matrix", l)
		}
	}
}
