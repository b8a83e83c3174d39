//go:build !lab

package main

import (
	"errors"
	"log/slog"

	"github.com/seckill/seckill/internal/app"
)

// errNoLab is LOCK_HISTORY set in the production build, which links no lock history.
var errNoLab = errors.New("LOCK_HISTORY is a tool of the lab build of the API (go build -tags lab ./cmd/api); this build has no lock history")

// labPlug is the production build's: nothing is plugged into the service.
func labPlug(cfg config, _ *slog.Logger) (plug func(app.Parts) app.Plugins, done func(), err error) {
	if cfg.lockHistory != "" {
		return nil, nil, errNoLab
	}
	return nil, func() {}, nil
}
