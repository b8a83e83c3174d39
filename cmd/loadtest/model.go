package main

import (
	"flag"

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
