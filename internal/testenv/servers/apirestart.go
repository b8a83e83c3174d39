package servers

// Restart starts the process again on the same address, once it has exited (a test's
// SIGTERM, Stop or Kill), with the same environment, and returns at once; WaitReady waits for
// it (see launch.API.Restart). It fails the test if the process still runs or runs in a
// network namespace.
func (a *API) Restart() {
	a.t.Helper()
	must(a.t, a.API.Restart())
}
