// Package procstat reads Linux's /proc/<pid>/stat (and /proc/<pid>/task/<tid>/stat): a
// process's or thread's command name, state and CPU time. cmd/loadtest counts the machine's
// CPU time by command with it, and the test servers wait with it until a paused process has
// stopped. It imports only the standard library.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// UserHZ is the unit of the CPU times in /proc/<pid>/stat: clock ticks of USER_HZ, which
// Linux fixes at 100 a second for every architecture's user space.
const UserHZ = 100

// Stat is what one stat line says of a process or thread.
type Stat struct {
	Comm  string // the command name, at most 15 bytes; may hold spaces and parentheses
	State byte   // 'R' running, 'S' sleeping, 'T' stopped by a signal, 't' stopped by a tracer...
	Ticks int64  // CPU time used, user and system (utime + stime), in ticks of UserHZ
}

// Stopped reports whether s is stopped, by a signal or by a tracer.
func (s Stat) Stopped() bool { return s.State == 'T' || s.State == 't' }

// Read reads and parses the stat file at path.
func Read(path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	return Parse(b)
}

// Parse reads a stat line: the command name runs from the first "(" to the last ")", since
// it may hold both; the state follows it, and utime and stime are the 14th and 15th fields.
func Parse(b []byte) (Stat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, errors.New("stat: no command name")
	}
	f := strings.Fields(string(b[end+1:])) // from the 3rd field, the state
	if len(f) < 13 || len(f[0]) != 1 {
		return Stat{}, errors.New("stat: too few fields")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Stat{}, fmt.Errorf("stat: %w", err)
	}
	return Stat{Comm: string(b[open+1 : end]), State: f[0][0], Ticks: utime + stime}, nil
}
