package loadgen

import (
	"fmt"
	"slices"
	"time"
)

// Abandon is an abandonment sale (docs/loadtest.md#abandonment-sales); the zero value is none.
type Abandon struct {
	// PayWithin is the product's payment window (pay_within_ms); 0: no reservations.
	PayWithin time.Duration
	// PayRatio and CancelRatio are a winner's chances to pay or cancel; sum at most 1.
	PayRatio, CancelRatio float64
	// PayDelay bounds a winner's uniform wait before paying or cancelling.
	PayDelay time.Duration
}

// On reports whether a is an abandonment sale.
func (a Abandon) On() bool { return a.PayWithin > 0 }

// abandonStrategies are the strategies whose products take a payment window: not naive
// (refused by the API). A queue winner is answered 202 and its order written later: its
// payment or cancel waits for the order (payers.act).
var abandonStrategies = []string{"dlock", FairStrategy, "pessimistic", "optimistic", "redis", QueueStrategy}

// validateAbandon reports what is wrong with c's abandonment sale.
func (c *Config) validateAbandon() (errs []error) {
	a := c.Abandon
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if a.PayWithin < 0 || a.PayWithin > 24*time.Hour || (a.On() && a.PayWithin < time.Millisecond) {
		bad("-pay-within %s: want 1ms to 24h (the API's pay_within_ms), or 0 for an ordinary sale", a.PayWithin)
	}
	if a.PayRatio < 0 || a.PayRatio > 1 || a.CancelRatio < 0 || a.CancelRatio > 1 {
		bad("-pay-ratio %v, -cancel-ratio %v: want fractions in [0,1]", a.PayRatio, a.CancelRatio)
	} else if a.PayRatio+a.CancelRatio > 1 {
		bad("-pay-ratio %v + -cancel-ratio %v = %v: want at most 1 (the rest walk away)", a.PayRatio, a.CancelRatio, a.PayRatio+a.CancelRatio)
	}
	if a.PayDelay < 0 {
		bad("-pay-delay %s: cannot be negative", a.PayDelay)
	}
	if !a.On() {
		if a.CancelRatio > 0 {
			bad("-cancel-ratio: only with -pay-within (an order without a payment window cannot be cancelled)")
		}
		return errs
	}
	for _, s := range c.Strategies {
		if !slices.Contains(abandonStrategies, s) {
			bad("-pay-within with strategy %s: an abandonment sale attacks %v (naive takes no window)", s, abandonStrategies)
		}
	}
	if c.AfterSoldOut > 0 {
		bad("-after-soldout with -pay-within: an abandonment sale goes on past sold out while units can come back; it stops when every unit is paid")
	}
	if c.Deploy.Product != 0 {
		bad("-product with -pay-within: the window is set when the product is created")
	}
	if c.Check {
		bad("-check with -pay-within: not supported: a sale whose units come back is checked by porcupine's search alone, exponential in the purchases in flight (the chaos suite's reservation tests check such sales: docs/loadtest.md, Abandonment sales)")
	}
	if c.Baseline {
		bad("-baseline with -pay-within: measure the baseline in a run of its own")
	}
	return errs
}

// Warnings returns what is legal but likely unmeant in a.
func (a Abandon) Warnings() []string {
	if a.On() && a.PayRatio > 0 && a.PayDelay > a.PayWithin {
		return []string{fmt.Sprintf("-pay-delay %s > -pay-within %s: about %.0f%% of the payments come after the window and are answered 409 order_expired",
			a.PayDelay, a.PayWithin, 100*float64(a.PayDelay-a.PayWithin)/float64(a.PayDelay))}
	}
	return nil
}

// describe is a for the scenario line: "" for an ordinary sale.
func (a Abandon) describe() string {
	if !a.On() {
		return ""
	}
	return fmt.Sprintf("abandonment sale: pay within %s, %.0f%% pay and %.0f%% cancel after uniform 0..%s, %.0f%% walk away",
		a.PayWithin, 100*a.PayRatio, 100*a.CancelRatio, a.PayDelay, 100*(1-a.PayRatio-a.CancelRatio))
}
