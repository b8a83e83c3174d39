// Package liveui serves loadtest ui's live page: a form that starts a strategies run (as
// loadtest compare) or a lab run (as loadtest lab), one at a time, and a page that draws each
// sale as it unfolds (server-sent events of internal/loadgen's samples and verdicts), keeps
// every run on disk and reopens it. Every asset is embedded: the page needs no network.
//
// A run attacks only the targets fixed at start, within the ceilings fixed at start; only the
// page itself may start or stop one (its Origin and a per-start token); the server answers its
// own loopback address unless public, which wants an access token (see Server.Handler). The
// configuration comes from cmd/loadtest (Config): nothing here reads flags or the environment.
package liveui
