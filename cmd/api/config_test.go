package main

import (
	"io"
	"strings"
	"testing"
)

// parseEnv is parseConfig with env as the whole environment and no flags.
func parseEnv(env map[string]string) (config, error) {
	return parseConfig(nil, lookup(env), io.Discard)
}

// lookup is os.LookupEnv on env as the whole environment: a key in env is set, if only to "".
func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

// mustParseEnv is parseEnv for an environment the test means to be valid: an error fails t.
func mustParseEnv(t *testing.T, env map[string]string) config {
	t.Helper()
	cfg, err := parseEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestAdminTokenLength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, token string
		ok          bool
	}{
		{"empty disables the admin routes", "", true},
		{"15 characters", "abcdefghijklmno", false},
		{"one character", "x", false},
		{"16 characters", "abcdefghijklmnop", true},
		{"long", "a-much-longer-admin-token-of-40-chars-xx", true},
		// Characters, not bytes: 15 runes of 2 bytes each are 30 bytes, and still too short.
		{"15 two-byte characters", strings.Repeat("é", 15), false},
		{"16 two-byte characters", strings.Repeat("é", 16), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := checkSetting(t, "ADMIN_TOKEN", tt.token, tt.ok, func(cfg config) string { return cfg.adminToken })
			if err != nil && strings.Contains(err.Error(), tt.token) {
				t.Fatalf("the error echoes the token: %v", err)
			}
		})
	}
}

// checkSetting parses the environment key=value alone and fails t unless the value is
// accepted, with field(cfg) == value, or refused with an error naming key, as ok says. It
// returns the error of a refusal.
func checkSetting(t *testing.T, key, value string, ok bool, field func(config) string) error {
	t.Helper()
	cfg, err := parseEnv(map[string]string{key: value})
	if ok {
		if err != nil || field(cfg) != value {
			t.Fatalf("%s %q: got %q, err %v; want it accepted", key, value, field(cfg), err)
		}
		return nil
	}
	if err == nil || !strings.Contains(err.Error(), key) {
		t.Fatalf("%s %q: err %v, want one naming %s", key, value, err, key)
	}
	return err
}

// TestAdminTokenFlag: the flag is held to the same rule as the variable.
func TestAdminTokenFlag(t *testing.T) {
	t.Parallel()
	_, err := parseConfig([]string{"-admin-token", "short-flag"}, lookup(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ADMIN_TOKEN") || strings.Contains(err.Error(), "short-flag") {
		t.Fatalf("-admin-token short-flag: err %v, want one naming ADMIN_TOKEN without the token", err)
	}
}

// TestUsageShowsNoSecrets: a flag error prints every flag with its default, and the defaults
// come from the environment: the admin token and the passwords must not be among them.
func TestUsageShowsNoSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"ADMIN_TOKEN":         "admin-token-s3cr3t-a",
		"DATABASE_URL":        "postgres://seckill:pg-s3cr3t-b@db:5432/seckill",
		"REDIS_ADDR":          "redis://:redis-s3cr3t-c@h:1",
		"REDIS_CLUSTER_ADDRS": "rediss://u:cluster-s3cr3t-d@a:1,rediss://u:cluster-s3cr3t-d@b:2",
		"REDLOCK_ADDRS":       "redis://:node-s3cr3t-e@a:1,b:2,c:3",
		"REDIS_PASSWORD":      "env-s3cr3t-f",
	}
	for _, args := range [][]string{{"-no-such-flag"}, {"-h"}} {
		var out strings.Builder
		if _, err := parseConfig(args, lookup(env), &out); err == nil {
			t.Fatalf("parseConfig(%q) = nil error", args)
		}
		if !strings.Contains(out.String(), "-redis-addr") {
			t.Fatalf("parseConfig(%q) printed no usage, so the test proves nothing:\n%s", args, out.String())
		}
		if strings.Contains(out.String(), "s3cr3t") {
			t.Fatalf("the usage message of %q shows a secret:\n%s", args, out.String())
		}
	}
}

// TestEmptySettingsRefused: DATABASE_URL, REDIS_ADDR or ETCD_ENDPOINTS set but empty, a
// secret's _FILE form set but empty or naming an empty file, and -database-url "" stop the
// program with an error naming the variable: none falls back to the development default.
// Unset, each keeps its default.
func TestEmptySettingsRefused(t *testing.T) {
	t.Parallel()
	empty, blank := writeSecret(t, "empty", ""), writeSecret(t, "blank", "\n")
	dsn := "postgres://u:p@db:5432/seckill"
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string // "": accepted, with DATABASE_URL dsn
	}{
		{nil, map[string]string{"DATABASE_URL": ""}, "DATABASE_URL is set but empty"},
		{nil, map[string]string{"REDIS_ADDR": ""}, "REDIS_ADDR is set but empty"},
		{nil, map[string]string{"ETCD_ENDPOINTS": ""}, "ETCD_ENDPOINTS is set but empty"},
		{nil, map[string]string{"DATABASE_URL_FILE": ""}, "DATABASE_URL_FILE is set but empty"},
		{nil, map[string]string{"DATABASE_URL": "", "DATABASE_URL_FILE": ""}, "DATABASE_URL_FILE is set but empty"},
		{nil, map[string]string{"DATABASE_URL_FILE": empty}, "DATABASE_URL_FILE: " + empty + " is empty"},
		{nil, map[string]string{"DATABASE_URL_FILE": blank}, "DATABASE_URL_FILE: " + blank + " is empty"},
		{nil, map[string]string{"ADMIN_TOKEN_FILE": empty}, "ADMIN_TOKEN_FILE: " + empty + " is empty"},
		{[]string{"-database-url", ""}, nil, "-database-url is empty"},
		// Controls: a value from its file, though the variable is set but empty; a flag
		// that overrides an empty variable.
		{nil, map[string]string{"DATABASE_URL": "", "DATABASE_URL_FILE": writeSecret(t, "dsn", dsn+"\n")}, ""},
		{[]string{"-database-url", dsn}, map[string]string{"DATABASE_URL": "x"}, ""},
	} {
		cfg, err := parseConfig(tt.args, lookup(tt.env), io.Discard)
		switch {
		case tt.want == "" && (err != nil || cfg.databaseURL != dsn):
			t.Errorf("%q %v: DATABASE_URL %q, err %v; want %q", tt.args, tt.env, cfg.databaseURL, err, dsn)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q %v: err %v, want one containing %q", tt.args, tt.env, err, tt.want)
		}
	}
	cfg := mustParseEnv(t, nil) // unset: the documented defaults
	if cfg.databaseURL != "postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable" || cfg.redis.addr != "127.0.0.1:6379" {
		t.Errorf("unset: DATABASE_URL %q, REDIS_ADDR %q; want the defaults", cfg.databaseURL, cfg.redis.addr)
	}
}
