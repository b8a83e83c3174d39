package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/seckill/seckill/internal/loadgen"
)

// The flags that take an attacking command to any deployment (-header, -tls-*, -product),
// choose its audit (-audit) and gate it (-max-p99, -max-error-rate, -min-orders-per-sec):
// docs/loadtest.md, "Thresholds and exit status" and "Any deployment".

// gateFlags adds those flags to fs, bound to c; -product only to run, which buys one product.
func (c *attackConfig) gateFlags(cmd string, fs *flag.FlagSet) {
	fs.Var(&c.gate.headers, "header",
		"'Name: value' added to every request loadtest sends: purchases, setup, audits, /readyz (repeatable; "+
			"a header loadtest sets itself, such as the admin routes' Authorization, is kept; the JSON report records names only)")
	fs.StringVar(&c.gate.tls.CA, "tls-ca", "", "PEM file of the CA certificates that sign the APIs' (https targets); default: the system's roots")
	fs.StringVar(&c.gate.tls.Cert, "tls-cert", "", "PEM file of the client certificate loadtest presents (with -tls-key)")
	fs.StringVar(&c.gate.tls.Key, "tls-key", "", "PEM file of the client certificate's private key (with -tls-cert)")
	fs.StringVar(&c.gate.tls.ServerName, "tls-server-name", "", "name the APIs' certificates must hold, sent as SNI; default: each target's host")
	c.gate.sign.signFlags(fs)
	if cmd == "run" {
		fs.Int64Var(&c.Deploy.Product, "product", 0,
			"buy this existing product (read through the API; its strategy, think_ms and stock are its own) instead of creating one")
	}
	fs.StringVar(&c.AuditMode, "audit", loadgen.AuditAuto, "which audits run beside the API's own: auto (PostgreSQL read directly "+
		"when it answers, else the API's alone), database (PostgreSQL must answer) or api (the API's alone)")
	fs.DurationVar(&c.Thresholds.MaxP99, "max-p99", 0, "threshold: exit 4 when the p99 latency of a product's arrivals, from when each "+
		"was due, passes this (those never sent count at their wait; at most -timeout; 0: none)")
	fs.Var(shareFlag{&c.Thresholds.MaxErrorRate}, "max-error-rate", "threshold: exit 4 when the share of error answers passes this, "+
		"such as 0, 0.001 or 0.1% (errors: no HTTP answer, 5xx but 503 busy, 4xx but 409 and 429; default: none)")
	fs.Float64Var(&c.Thresholds.MinOrdersPerSec, "min-orders-per-sec", 0, "threshold: exit 4 when a product sells fewer orders/s (0: none)")
}

// gateArgs are the flags that finishGate reads into Config.Deploy.
type gateArgs struct {
	headers headerFlag
	tls     loadgen.TLSFiles
	sign    signArgs
}

// finishGate reads the headers and the TLS files into c.Deploy, and refuses the flags
// -product makes meaningless.
func (c *attackConfig) finishGate(fs *flag.FlagSet) error {
	header, err := c.gate.headers.parse()
	if err != nil {
		return loadgen.UsageError{Err: err}
	}
	c.Deploy.Header = header
	tlsConfig, err := c.gate.tls.Config()
	if err != nil {
		return loadgen.UsageError{Err: err}
	}
	c.Deploy.TLS = tlsConfig
	if c.Deploy.Tokens, err = c.gate.sign.tokens(); err != nil {
		return err
	}
	if c.Deploy.Product != 0 {
		var shaping []string
		fs.Visit(func(f *flag.Flag) {
			if slices.Contains([]string{"strategy", "stock", "think-ms"}, f.Name) {
				shaping = append(shaping, "-"+f.Name)
			}
		})
		if len(shaping) > 0 {
			return loadgen.UsageError{Err: fmt.Errorf("-product buys the product as it is: %s would shape a new one; drop them",
				strings.Join(shaping, ", "))}
		}
	}
	return nil
}

// headerFlag collects repeated -header 'Name: value' flags, unparsed: finishGate parses
// them, so that no message repeats a value (the flag package quotes a value Set refuses, and
// a header may hold a credential). Its String shows the names only, for the JSON report's
// flags (recordedFlags).
type headerFlag []string

func (h *headerFlag) String() string {
	var names []string
	for _, v := range *h {
		name, _, _ := strings.Cut(v, ":")
		names = append(names, strings.TrimSpace(name)+": REDACTED")
	}
	return strings.Join(names, ", ")
}

func (h *headerFlag) Set(v string) error {
	*h = append(*h, v)
	return nil
}

// parse reads every -header into one http.Header; nil without one.
func (h headerFlag) parse() (http.Header, error) {
	var header http.Header
	var errs []error
	for i, v := range h {
		name, value, err := loadgen.ParseHeader(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("-header (the %s): %w", ordinal(i+1), err))
			continue
		}
		if header == nil {
			header = http.Header{}
		}
		header.Add(name, value)
	}
	return header, errors.Join(errs...)
}

// ordinal writes n as "1st", "2nd", "3rd", "4th"...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100/10 == 1:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// shareFlag is -max-error-rate: nil until set, then the share given ("0.1%" reads 0.001).
type shareFlag struct{ p **float64 }

func (f shareFlag) String() string {
	if f.p == nil || *f.p == nil {
		return ""
	}
	return strconv.FormatFloat(**f.p, 'g', -1, 64)
}

func (f shareFlag) Set(s string) error {
	v, err := loadgen.ParseShare(s)
	if err != nil {
		return err
	}
	*f.p = &v
	return nil
}
