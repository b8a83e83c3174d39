package envflag_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/envflag"
)

// TestFiles: KEY_FILE gives KEY the file's content without one trailing newline; other
// variables read as before.
func TestFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	env := map[string]string{
		"TOKEN_FILE":    write("token", "s3cr3t-token\n"),
		"PASSWORD_FILE": write("password", "pass word\r\n"),
		"URL_FILE":      write("url", "postgres://u:p@h/db\n\n"), // one newline only
		"PLAIN":         "plain",
		"PLAIN_FILE":    "", // empty: not set
	}
	getenv, err := envflag.Files(func(k string) string { return env[k] }, "TOKEN", "PASSWORD", "URL", "PLAIN", "UNSET")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"TOKEN": "s3cr3t-token", "PASSWORD": "pass word", "URL": "postgres://u:p@h/db\n",
		"PLAIN": "plain", "UNSET": "", "TOKEN_FILE": env["TOKEN_FILE"]} {
		if got := getenv(key); got != want {
			t.Errorf("getenv(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestFilesErrors: both forms set, a missing file, a directory, a huge file and an empty one
// are errors naming the variable, and never show a secret.
func TestFilesErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(huge, make([]byte, 64<<10+1), 0o600); err != nil {
		t.Fatal(err)
	}
	empty, newline := filepath.Join(dir, "empty"), filepath.Join(dir, "newline")
	if err := errors.Join(os.WriteFile(empty, nil, 0o600), os.WriteFile(newline, []byte("\r\n"), 0o600)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"both", map[string]string{"TOKEN": "s3cr3t-env", "TOKEN_FILE": secret}, "TOKEN and TOKEN_FILE are both set"},
		{"missing", map[string]string{"TOKEN_FILE": filepath.Join(dir, "nope")}, "TOKEN_FILE: open " + filepath.Join(dir, "nope")},
		{"directory", map[string]string{"TOKEN_FILE": dir}, "TOKEN_FILE: read " + dir},
		{"huge", map[string]string{"TOKEN_FILE": huge}, "TOKEN_FILE: " + huge + ": longer than 64 KiB"},
		{"empty", map[string]string{"TOKEN_FILE": empty}, "TOKEN_FILE: " + empty + " is empty"},
		{"only a newline", map[string]string{"TOKEN_FILE": newline}, "TOKEN_FILE: " + newline + " is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := envflag.Files(func(k string) string { return tt.env[k] }, "TOKEN")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}
