// Package observecheck holds no code: its tests check the observability pack of deploy/
// (Prometheus's configuration and rules, Grafana's provisioning and dashboard) with the tools
// that read it: promtool checks the configuration and the rules and runs the rules' unit
// tests, and a real Prometheus scrapes API processes during a short sale and evaluates every
// dashboard and rule expression through its HTTP API.
package observecheck
