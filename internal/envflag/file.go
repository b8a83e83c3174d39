package envflag

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxFile is the longest file a KEY_FILE variable may name: a password, a token or a URL is
// far shorter, and a bound keeps a mistake such as /dev/zero from reading forever.
const maxFile = 64 << 10

// Files returns a getenv that reads each of keys from the file KEY_FILE names, if set
// (docs/configuration.md#secrets-in-files). It fails for KEY and KEY_FILE both set, or a bad file.
func Files(getenv func(string) string, keys ...string) (func(string) string, error) {
	values := map[string]string{}
	var errs []error
	for _, key := range keys {
		path := getenv(key + "_FILE")
		if path == "" {
			continue
		}
		if getenv(key) != "" {
			errs = append(errs, fmt.Errorf("%s and %s_FILE are both set: set one", key, key))
			continue
		}
		v, err := readSecret(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s_FILE: %w", key, err))
			continue
		}
		values[key] = v
	}
	return func(key string) string {
		if v, ok := values[key]; ok {
			return v
		}
		return getenv(key)
	}, errors.Join(errs...)
}

// readSecret returns the content of the file at path without one trailing newline.
func readSecret(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return "", err // an *fs.PathError: it names the file
	}
	if len(b) > maxFile {
		return "", fmt.Errorf("%s: longer than %d KiB", path, maxFile>>10)
	}
	s := string(b)
	if t, ok := strings.CutSuffix(s, "\r\n"); ok {
		s = t
	} else {
		s = strings.TrimSuffix(s, "\n")
	}
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
}
