//go:build !race

package servers

// raceEnabled: the test binary runs without the race detector, and so does the API it builds.
const raceEnabled = false
