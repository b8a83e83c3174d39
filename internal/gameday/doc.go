// Package gameday holds no code: its test runs the deployment as a team runs it on one
// machine (HAProxy in front of three API processes, PostgreSQL failing over under Patroni,
// Redis with Sentinel, etcd, Prometheus and Alertmanager posting to a webhook) and sells
// through the load balancer while a schedule of faults hits it, then judges every answer and
// alert and writes a table and one HTML page. `make gameday` runs the whole schedule
// (SECKILL_GAMEDAY=full); `make test` runs one cell of each fault. docs/failures.md, "Game
// day", has the figures and docs/testing.md how to run it.
package gameday
