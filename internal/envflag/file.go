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

// Files returns a getenv that gives each of keys its KEY_FILE form, as container secrets are
// mounted: when KEY_FILE names a file, KEY's value is its content without one trailing newline
// (docs/configuration.md#secrets-in-files). The error, joined for every key, is for both KEY and
// KEY_FILE set or a file unreadable, empty or over 64 KiB, and never holds the content. The
// returned getenv is safe for concurrent use if getenv is.
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
