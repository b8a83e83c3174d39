//go:build linux && race

package chaos_test

// raceEnabled: the tests run with -race, so the API processes are built with it too.
const raceEnabled = true
