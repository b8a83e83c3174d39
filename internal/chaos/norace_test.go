//go:build linux && !race

package chaos_test

// raceEnabled: the tests run without -race, and so do the API processes.
const raceEnabled = false
