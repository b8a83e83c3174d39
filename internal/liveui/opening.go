package liveui

import (
	"strconv"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
)

// openingRequest is the page's opening; a field left 0 takes loadtest's default.
type openingRequest struct {
	InMS       int      `json:"in_ms"`
	Burst      int      `json:"burst"`
	WindowMS   int      `json:"window_ms"`
	EarlyShare *float64 `json:"early_share"`
}

// openingFlags sets req's opening, if it is one, in cfg and returns its flags.
func openingFlags(req runRequest, cfg *loadgen.Config) [][2]string {
	o := req.Opening
	if o == nil {
		return nil
	}
	cfg.Model = loadgen.ModelOpening
	c := &cfg.Opening
	if o.InMS != 0 {
		c.In = time.Duration(o.InMS) * time.Millisecond
	}
	if o.Burst != 0 {
		c.Burst = o.Burst
	}
	if o.WindowMS != 0 {
		c.Window = time.Duration(o.WindowMS) * time.Millisecond
	}
	if o.EarlyShare != nil {
		c.EarlyShare = *o.EarlyShare
	}
	return [][2]string{{"model", loadgen.ModelOpening}, {"opening-in", c.In.String()}, {"burst", strconv.Itoa(c.Burst)},
		{"burst-window", c.Window.String()}, {"early-share", strconv.FormatFloat(c.EarlyShare, 'g', -1, 64)}}
}

// abandonFlags sets req's abandonment sale, if it is one, in cfg and returns its flags.
func abandonFlags(req runRequest, cfg *loadgen.Config) [][2]string {
	if req.PayWithinMS == 0 {
		return nil
	}
	a := &cfg.Abandon
	a.PayWithin = time.Duration(req.PayWithinMS) * time.Millisecond
	if req.PayRatio != nil {
		a.PayRatio = *req.PayRatio
	}
	if req.PayDelayMS != nil {
		a.PayDelay = time.Duration(*req.PayDelayMS) * time.Millisecond
	}
	a.CancelRatio = req.CancelRatio
	return [][2]string{{"pay-within", a.PayWithin.String()}, {"pay-ratio", strconv.FormatFloat(a.PayRatio, 'g', -1, 64)},
		{"cancel-ratio", strconv.FormatFloat(a.CancelRatio, 'g', -1, 64)}, {"pay-delay", a.PayDelay.String()}}
}
