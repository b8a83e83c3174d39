package main

import (
	"flag"
	"fmt"

	"github.com/seckill/seckill/internal/loadgen"
)

// resolveModel picks the load model the command line asked for, when -model did not say:
// -stages is open; -workers without -rate is closed, as fast as answered (what loadtest did
// before it had models); anything else is open, at -rate (loadgen.DefaultRate by default)
// with -workers workers to start with. A closed run paced as wrk2 is -model closed -workers N
// -rate R.
func (c *attackConfig) resolveModel(fs *flag.FlagSet) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case c.Model != "":
	case len(c.Stages) > 0:
		c.Model = loadgen.ModelOpen
	case set["workers"] && !set["rate"]:
		c.Model = loadgen.ModelClosed
	default:
		c.Model = loadgen.ModelOpen
	}
	if c.Model == loadgen.ModelClosed && !set["rate"] {
		c.Rate = 0
	}
}

// finishOpening refuses an opening's flags without -model opening, and leaves out compare's
// sold-out baselines from an opening unless -baseline asks for them (which validation refuses).
func (c *attackConfig) finishOpening(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.Model != loadgen.ModelOpening {
		for _, name := range []string{"opening-in", "burst", "burst-window", "early-share", "early-hits"} {
			if set[name] {
				return loadgen.UsageError{Err: fmt.Errorf("-%s: only with -model opening", name)}
			}
		}
		return nil
	}
	if !set["baseline"] {
		c.Baseline = false
	}
	return nil
}
