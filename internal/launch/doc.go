// Package launch starts the processes the tests run with: cmd/api's lab build, built from
// source once per test binary (BuildAPI, StartAPI), the processes of internal/procs under the
// same names, a PostgreSQL cluster (StartPostgres), PostgreSQL with failover, two nodes managed
// by Patroni (StartPatroni), a PgBouncer in front of a database (StartPgBouncer), etcd members
// (StartEtcd, StartEtcdCluster), and Patroni nodes in network namespaces that their caller cuts
// off whole (Isolate). It runs the go command (BuildAPI), so no shipped binary links it
// (internal/boundarycheck); the lab's runner starts its processes with internal/procs.
//
// Every function returns its error; nothing here knows of package testing. A test that lacks
// a binary or a privilege gets an error that wraps ErrUnavailable: internal/testenv/servers,
// the tests' wrappers of this package, skips the test then (or fails it where every test must
// run: see internal/testenv/missing).
package launch
