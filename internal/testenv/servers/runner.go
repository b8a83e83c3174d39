package servers

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// T is what the process launchers (StartAPI, LaunchAPI, BuildAPI, FreeAddr) need of their
// caller: a testing.TB has it, and so does a Runner, for programs that run the service's
// processes the way tests do (cmd/loadtest lab).
type T interface {
	Helper()
	Name() string
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Failed() bool
	Cleanup(f func())
}

// Runner is a T for a program: Fatal ends the function that Run runs, Errorf is collected,
// and cleanups run at Close, last registered first. Its methods are safe for concurrent use,
// but Fatal must be called from Run's goroutine.
type Runner struct {
	name     string
	logf     func(format string, args ...any)
	mu       sync.Mutex
	errs     []error
	cleanups []func()
}

// NewRunner returns a Runner named name that logs with logf (nil: nowhere).
func NewRunner(name string, logf func(format string, args ...any)) *Runner {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Runner{name: name, logf: logf}
}

// fatal is the panic value of Runner.Fatal, recovered by Run.
type fatal struct{ err error }

// Run calls f and returns what ended it with Fatal, or else the errors collected so far.
func (r *Runner) Run(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			ft, ok := v.(fatal)
			if !ok {
				panic(v)
			}
			err = ft.err
		}
	}()
	f()
	return r.Err()
}

// Err joins the errors reported with Errorf.
func (r *Runner) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

// Close runs the cleanups, last registered first, and returns Err.
func (r *Runner) Close() error {
	r.mu.Lock()
	cs := slices.Clone(r.cleanups)
	r.cleanups = nil
	r.mu.Unlock()
	for _, f := range slices.Backward(cs) {
		f()
	}
	return r.Err()
}

func (r *Runner) Helper()      {}
func (r *Runner) Name() string { return r.name }
func (r *Runner) Failed() bool { return r.Err() != nil }

func (r *Runner) Fatal(args ...any) { panic(fatal{errors.New(fmt.Sprint(args...))}) }

func (r *Runner) Fatalf(format string, args ...any) { panic(fatal{fmt.Errorf(format, args...)}) }

func (r *Runner) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Errorf(format, args...))
}

func (r *Runner) Logf(format string, args ...any) { r.logf(format, args...) }

func (r *Runner) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}
