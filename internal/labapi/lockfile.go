package labapi

import (
	"log/slog"
	"os"
	"strconv"

	"github.com/seckill/seckill/internal/history"
)

// OpenLockHistory opens LOCK_HISTORY's file, to which the process appends every product lock
// operation (grant, write, loss, release; internal/history), its own named by its pid, and
// returns the recorder with the function that closes it. With path empty recording is off:
// the recorder is nil.
func OpenLockHistory(path string, log *slog.Logger) (history.Recorder, func(), error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := history.CreateLockFile(path, strconv.Itoa(os.Getpid()))
	if err != nil {
		return nil, nil, err
	}
	log.Warn("LOCK_HISTORY is set: every product lock operation is appended to a file (a test and lab tool)", "file", path)
	return f, func() {
		if err := f.Close(); err != nil {
			log.Error("lock history", "err", err)
		}
	}, nil
}
