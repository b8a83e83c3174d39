package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestHelp: -h, -help, --help and help print the usage message, with every command and each
// flag's type and default, and succeed, as a Go command does.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--help"}, {"help"}, {"migrate", "-h"}, {"version", "-h"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append([]string{"api"}, args...), lookup(nil), &stdout, &stderr); err != nil {
			t.Fatalf("api %q: %v, want nil", args, err)
		}
		help := stderr.String()
		for _, want := range []string{"usage: api [COMMAND] [flags]", "\n  serve ", "\n  migrate ", "\n  healthcheck ", "\n  version ",
			"-lock-ttl duration", "(default 2s)", "-db-max-conns int", "(default 20)", "-migrate\n", "-write-timeout duration",
			"ADMIN_TOKEN_FILE", "strconv.ParseBool"} {
			if !strings.Contains(help, want) {
				t.Errorf("api %q: the usage message lacks %q:\n%s", args, want, help)
			}
		}
		if stdout.Len() > 0 {
			t.Errorf("api %q printed on stdout: %q", args, stdout.String())
		}
	}
}

// TestUsageErrors: a flag that does not exist, a value that does not parse and an argument
// nobody asked for are errors naming what is wrong.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"-no-such-flag":    "flag provided but not defined: -no-such-flag",
		"-lock-ttl soon":   `invalid value "soon" for flag -lock-ttl`,
		"-migrate=yes":     `invalid boolean value "yes" for -migrate`,
		"-db-max-conns x":  `invalid value "x" for flag -db-max-conns`,
		"version extra":    "unexpected arguments: [extra]",
		"serve extra":      "unexpected arguments: [extra]",
		"-lock-ttl 50ms":   "LOCK_TTL 50ms: want a duration of at least 100ms",
		"-db-max-conns -1": "DB_MAX_CONNS -1: want a positive integer",
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), append([]string{"api"}, strings.Fields(args)...), lookup(nil), io.Discard, &stderr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("api %s: %v, want an error containing %q", args, err, want)
		}
	}
}

// TestVersionCommand: `api version` is `api -version`, whatever the rest of the configuration
// says.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DB_MAX_CONNS": "zero", "MIGRATE_ON_START": "yes", "ADMIN_TOKEN_FILE": "/nonexistent"}
	var outs [2]bytes.Buffer
	for i, arg := range []string{"version", "-version"} {
		if err := run(context.Background(), []string{"api", arg}, lookup(env), &outs[i], io.Discard); err != nil {
			t.Fatalf("api %s: %v", arg, err)
		}
	}
	if outs[0].String() != outs[1].String() || !strings.HasPrefix(outs[0].String(), "api ") {
		t.Fatalf("api version printed %q, api -version %q: want the same build line", outs[0].String(), outs[1].String())
	}
}

// TestBooleans: MIGRATE_ON_START takes what strconv.ParseBool takes, and refuses anything else
// with an error naming it instead of turning migrations off.
func TestBooleans(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]bool{"": true, "1": true, "t": true, "T": true, "TRUE": true, "true": true, "True": true,
		"0": false, "f": false, "F": false, "FALSE": false, "false": false, "False": false} {
		if got := mustParseEnv(t, map[string]string{"MIGRATE_ON_START": value}).migrate; got != want {
			t.Errorf("MIGRATE_ON_START=%q: migrate %t, want %t", value, got, want)
		}
	}
	for _, value := range []string{"yes", "no", "on", "off", "y", "2", "tRuE", " true"} {
		if _, err := parseEnv(map[string]string{"MIGRATE_ON_START": value}); err == nil || !strings.Contains(err.Error(), "MIGRATE_ON_START") {
			t.Errorf("MIGRATE_ON_START=%q: err %v, want one naming MIGRATE_ON_START", value, err)
		}
	}
	// The flag, which overrides the variable, is held to the same rule, and a bad variable
	// does not matter once the flag is set.
	if _, err := parseConfig([]string{"-migrate=on"}, lookup(nil), io.Discard); err == nil {
		t.Error("-migrate=on accepted")
	}
	cfg, err := parseConfig([]string{"-migrate=T"}, lookup(map[string]string{"MIGRATE_ON_START": "on"}), io.Discard)
	if err != nil || !cfg.migrate {
		t.Errorf("MIGRATE_ON_START=on -migrate=T: migrate %t, err %v; want true, nil", cfg.migrate, err)
	}
}

// TestTypedSettings: durations and counts read from the environment, and a value that does
// not parse is an error naming its variable.
func TestTypedSettings(t *testing.T) {
	t.Parallel()
	cfg := mustParseEnv(t, map[string]string{"LOCK_TTL": "1500ms", "DB_MAX_CONNS": "7", "SHUTDOWN_TIMEOUT": "3s"})
	if cfg.lockTTL != 1500*time.Millisecond || cfg.dbMaxConns != 7 || cfg.shutdownTimeout != 3*time.Second {
		t.Errorf("lockTTL %s, dbMaxConns %d, shutdownTimeout %s; want 1.5s, 7, 3s", cfg.lockTTL, cfg.dbMaxConns, cfg.shutdownTimeout)
	}
	_, err := parseEnv(map[string]string{"LOCK_TTL": "soon", "BATCH_MAX": "lots", "QUEUE_WAIT": "1"})
	for _, want := range []string{`LOCK_TTL "soon": want a duration`, `BATCH_MAX "lots": want an integer`, `QUEUE_WAIT "1": want a duration`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v, want it to contain %q", err, want)
		}
	}
}

// writeSecret writes content to a file of its own in t's temporary directory and returns its
// path.
func writeSecret(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSecretFiles: every secret setting has a _FILE form. The API runs with its PostgreSQL
// URL, a Redis password and its admin token each read from a file (with the trailing newline
// an editor leaves), is ready and sells; no secret reaches the log.
func TestSecretFiles(t *testing.T) {
	t.Parallel()
	const password = "file-pw-s3cr3t-a"
	srv := servers.StartRedis(t, "--requirepass", password)
	env := map[string]string{
		"DATABASE_URL_FILE":   writeSecret(t, "dsn", testenv.Schema(t)+"\n"),
		"REDIS_ADDR":          srv.Addr,
		"REDIS_PASSWORD_FILE": writeSecret(t, "redis", password+"\n"),
		"ADMIN_TOKEN_FILE":    writeSecret(t, "token", authToken+"\r\n"),
		"REDIS_KEY_PREFIX":    testenv.Name("files"),
		"LOG_LEVEL":           "debug",
	}
	api := startAPI(t, env)
	if status, body := readyz(t, api.base, true); status != http.StatusOK {
		t.Fatalf("GET /readyz = %d %s, want 200", status, body)
	}
	answers := buyOnce(t, api.base, "dlock")
	logs := api.stop()
	if strings.Contains(logs, password) || strings.Contains(logs, authToken) || strings.Contains(answers, password) {
		t.Fatalf("a secret leaked; answers %s\nlog:\n%s", answers, logs)
	}
	// Each secret's _FILE form, read by parseConfig: a value and where the configuration
	// shows it.
	forms := map[string]struct {
		value string
		got   func(config) string
	}{
		"DATABASE_URL":        {"postgres://u:pw@db:5432/seckill", func(c config) string { return c.databaseURL }},
		"REDIS_ADDR":          {"redis://:pw@h:1", func(c config) string { return "redis://:" + c.redis.password + "@" + c.redis.addr }},
		"REDIS_CLUSTER_ADDRS": {"a:1,b:2", func(c config) string { return c.redisCluster[0].addr + "," + c.redisCluster[1].addr }},
		"REDLOCK_ADDRS":       {"a:1,b:2,c:3", func(c config) string { return c.redlock[0].addr + ",b:2,c:3" }},
		"REDIS_SENTINEL_ADDRS": {"redis://:pw@a:1", func(c config) string {
			return "redis://:" + c.redisSentinel.sentinels[0].password + "@" + c.redisSentinel.sentinels[0].addr
		}},
		"REDIS_PASSWORD":          {"pw", func(c config) string { return c.redis.password }},
		"REDIS_SENTINEL_PASSWORD": {"pw", func(c config) string { return c.redisSentinel.sentinels[0].password }},
		"ETCD_PASSWORD":           {"pw", func(c config) string { return c.etcd.password }},
		"ADMIN_TOKEN":             {"a-secret-of-20-chars", func(c config) string { return c.adminToken }},
	}
	for _, key := range secrets {
		form, ok := forms[key]
		if !ok {
			t.Fatalf("secret %s is not tested", key)
		}
		env := map[string]string{key + "_FILE": writeSecret(t, "s", form.value+"\n")}
		switch key {
		case "ETCD_PASSWORD": // read only with a user and an etcd
			env["ETCD_USERNAME"], env["ETCD_ENDPOINTS"] = "u", "127.0.0.1:2379"
		case "REDIS_SENTINEL_ADDRS": // only with a master's name
			env["REDIS_SENTINEL_MASTER"] = "m"
		case "REDIS_SENTINEL_PASSWORD": // read only with sentinels
			env["REDIS_SENTINEL_ADDRS"], env["REDIS_SENTINEL_MASTER"] = "a:1", "m"
		}
		cfg := mustParseEnv(t, env)
		if got := form.got(cfg); got != form.value {
			t.Errorf("%s_FILE: %s = %q, want %q", key, key, got, form.value)
		}
	}
}

// TestSecretFileErrors: a secret given twice, or in a file that cannot be read or is empty,
// and a DATABASE_URL set but empty, stop the program with an error naming the variable and
// never the secret.
func TestSecretFileErrors(t *testing.T) {
	t.Parallel()
	token := writeSecret(t, "token", "admin-token-s3cr3t-file")
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"both forms", map[string]string{"ADMIN_TOKEN": "admin-token-s3cr3t-env", "ADMIN_TOKEN_FILE": token}, "ADMIN_TOKEN and ADMIN_TOKEN_FILE are both set"},
		{"missing file", map[string]string{"DATABASE_URL_FILE": missing}, "DATABASE_URL_FILE: open " + missing},
		{"a directory", map[string]string{"REDIS_PASSWORD_FILE": t.TempDir()}, "REDIS_PASSWORD_FILE: read "},
		{"etcd", map[string]string{"ETCD_PASSWORD_FILE": missing}, "ETCD_PASSWORD_FILE: open"},
		{"empty file", map[string]string{"DATABASE_URL_FILE": writeSecret(t, "empty", "")}, "DATABASE_URL_FILE: "},
		{"empty variable", map[string]string{"DATABASE_URL": ""}, "DATABASE_URL is set but empty"},
	}
	// Should the settings be accepted, the program would serve: on loopback, for 5 s at most.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tt := range tests {
		tt.env["HTTP_ADDR"] = testenv.FreeAddr(t)
		err := run(ctx, []string{"api"}, lookup(tt.env), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		} else if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error shows the secret: %v", tt.name, err)
		}
	}
}
