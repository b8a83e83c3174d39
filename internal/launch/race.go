//go:build race

package launch

// raceEnabled: this binary runs with the race detector, so BuildAPI builds with it too.
const raceEnabled = true
