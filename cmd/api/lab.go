//go:build lab

package main

import (
	"log/slog"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/labapi"
)

// labPlug is the lab build's (go build -tags lab ./cmd/api; make demo, make lab and the tests
// run it): the teaching strategies, think_ms and, with LOCK_HISTORY, the lock history, plugged
// into the service from internal/labapi. done closes the lock history's file.
func labPlug(cfg config, log *slog.Logger) (plug func(app.Parts) app.Plugins, done func(), err error) {
	rec, done, err := labapi.OpenLockHistory(cfg.lockHistory, log)
	if err != nil {
		return nil, nil, err
	}
	log.Info("the lab build: teaching strategies naive and lab, and think_ms, are on")
	return labapi.Plug(labapi.Options{LockHistory: rec}), done, nil
}
