package loadgen

import (
	"strings"
	"testing"
	"time"
)

func TestAbandonValidate(t *testing.T) {
	base := func() Config {
		c := DefaultConfig()
		c.Targets, c.AdminToken, c.Strategies, c.StrategyFlag = []string{"http://127.0.0.1:8080"}, "t", []string{"redis"}, "-strategy"
		c.Abandon.PayWithin = 2 * time.Second
		return c
	}
	for _, tt := range []struct {
		name string
		edit func(*Config)
		want string // "" for none
	}{
		{"ok", func(*Config) {}, ""},
		{"every winner pays", func(c *Config) { c.Abandon.PayRatio = 1 }, ""},
		{"ratio above 1", func(c *Config) { c.Abandon.PayRatio = 1.5 }, "want fractions in [0,1]"},
		{"negative ratio", func(c *Config) { c.Abandon.CancelRatio = -0.1 }, "want fractions in [0,1]"},
		{"sum above 1", func(c *Config) { c.Abandon.CancelRatio = 0.4 }, "want at most 1"},
		{"negative delay", func(c *Config) { c.Abandon.PayDelay = -time.Second }, "-pay-delay"},
		{"window too long", func(c *Config) { c.Abandon.PayWithin = 25 * time.Hour }, "-pay-within 25h0m0s"},
		{"naive", func(c *Config) { c.Strategies = []string{"naive"} }, "strategy naive"},
		{"queue", func(c *Config) { c.Strategies = []string{QueueStrategy} }, ""},
		{"after sold out", func(c *Config) { c.AfterSoldOut = time.Second }, "-after-soldout with -pay-within"},
		{"check", func(c *Config) { c.Check = true }, "-check with -pay-within"},
		{"baseline", func(c *Config) { c.Baseline = true }, "-baseline with -pay-within"},
		{"cancel without window", func(c *Config) { c.Abandon = Abandon{CancelRatio: 0.1} }, "-cancel-ratio: only with -pay-within"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.edit(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestAbandonWarnsOfLatePayments(t *testing.T) {
	a := Abandon{PayWithin: time.Second, PayRatio: 0.7, PayDelay: 4 * time.Second}
	if w := a.Warnings(); len(w) != 1 || !strings.Contains(w[0], "75% of the payments come after the window") {
		t.Errorf("Warnings = %q, want one saying 75%% of the payments are late", w)
	}
	a.PayDelay = time.Second
	if w := a.Warnings(); len(w) != 0 {
		t.Errorf("Warnings = %q with the delay within the window, want none", w)
	}
}

// TestCheckLifecycle is the audit of a settled abandonment sale and its negative controls:
// each tampered figure (a unit lost, a unit made, a unit paid twice, a reservation the sweeper
// left, a payment nobody was answered) is flagged, and the true figures are not.
func TestCheckLifecycle(t *testing.T) {
	good := func() (LifecycleAudit, PayerCounts) {
		return LifecycleAudit{Source: ranDatabase, InitialStock: 30, Stock: 0, Pending: 0, Paid: 30, Ended: 14,
				Expired: new(int64(12)), Cancelled: new(int64(2))},
			PayerCounts{Reserved: 44, PaidUsers: 30, Cancelled: 2}
	}
	a, pc := good()
	if got := checkLifecycle(a, pc, true); len(got) != 0 {
		t.Fatalf("checkLifecycle of a true sale = %q, want nothing", got)
	}
	for _, tt := range []struct {
		name   string
		tamper func(*LifecycleAudit, *PayerCounts)
		want   string
	}{
		{"a unit lost", func(a *LifecycleAudit, pc *PayerCounts) { a.Paid, pc.PaidUsers = 29, 29 }, "= 29, not the initial stock 30"},
		{"a unit made", func(a *LifecycleAudit, _ *PayerCounts) { a.Stock = 1 }, "= 31, not the initial stock 30"},
		{"a unit paid twice", func(a *LifecycleAudit, _ *PayerCounts) { a.Paid, a.Stock = 31, -1 }, "units paid twice"},
		{"a user paid twice", func(a *LifecycleAudit, _ *PayerCounts) { a.UsersPaidTwice = 1 }, "1 users paid twice"},
		{"left pending", func(a *LifecycleAudit, _ *PayerCounts) { a.Pending, a.Paid = 1, 29 }, "still pending"},
		{"paid unanswered", func(_ *LifecycleAudit, pc *PayerCounts) { pc.PaidUsers = 28 }, "only 28 users were answered paid"},
		{"answered unpaid", func(a *LifecycleAudit, _ *PayerCounts) { a.Paid, a.Stock = 29, 1 }, "30 users were answered paid"},
		{"ended split", func(a *LifecycleAudit, _ *PayerCounts) { a.Ended = 15 }, "!= ended 15"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, pc := good()
			tt.tamper(&a, &pc)
			got := checkLifecycle(a, pc, false)
			if !strings.Contains(strings.Join(got, "; "), tt.want) {
				t.Errorf("checkLifecycle = %q, want a problem containing %q", got, tt.want)
			}
		})
	}
}
