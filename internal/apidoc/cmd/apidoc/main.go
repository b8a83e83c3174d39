// Command apidoc writes the API reference page from the OpenAPI description:
//
//	go run ./internal/apidoc/cmd/apidoc -in internal/api/openapi.yaml -out docs/api.html
//
// `make docs-api` runs it. It is a tool of the repository, not part of the api binary.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/seckill/seckill/internal/apidoc"
)

func main() {
	if err := run(context.Background(), os.Args, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "internal/api/openapi.yaml", "the OpenAPI description to read")
	out := fs.String("out", "docs/api.html", "the page to write")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	spec, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	page, err := apidoc.Render(spec)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	if err := os.WriteFile(*out, page, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes) from %s\n", *out, len(page), *in)
	return nil
}
