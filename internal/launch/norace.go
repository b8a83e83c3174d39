//go:build !race

package launch

// raceEnabled: this binary runs without the race detector, and so does the API BuildAPI builds.
const raceEnabled = false
