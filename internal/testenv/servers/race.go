//go:build race

package servers

// raceEnabled: the test binary runs with the race detector, so BuildAPI builds with it too.
const raceEnabled = true
