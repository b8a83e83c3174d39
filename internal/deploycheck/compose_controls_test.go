package deploycheck_test

import (
	"strings"
	"testing"
)

func service(m map[string]any, name string) map[string]any {
	return m["services"].(map[string]any)[name].(map[string]any)
}

func env(m map[string]any, name string) map[string]any {
	return service(m, name)["environment"].(map[string]any)
}

// TestComposeControls proves each check can fail: every mutated copy of compose.yaml is
// rejected by the check named, with a message that says why.
func TestComposeControls(t *testing.T) {
	cases := []struct {
		name, check, want string
		mutate            func(m map[string]any)
	}{
		{"image latest", "images pinned", "redis:latest", func(m map[string]any) {
			service(m, "redis")["image"] = "redis:latest"
		}},
		{"image untagged", "images pinned", `"haproxy"`, func(m map[string]any) {
			service(m, "lb")["image"] = "haproxy"
		}},
		{"no health check", "health checks", "etcd: long-running, without a health check", func(m map[string]any) {
			delete(service(m, "etcd"), "healthcheck")
			for _, s := range []string{"api"} {
				service(m, s)["depends_on"].(map[string]any)["etcd"] = map[string]any{"condition": "service_started"}
			}
		}},
		{"depends_on started", "health checks", `depends_on redis with condition "service_started"`, func(m map[string]any) {
			service(m, "api")["depends_on"].(map[string]any)["redis"] = map[string]any{"condition": "service_started"}
		}},
		{"secret with a default", "no secret default", "${ADMIN_TOKEN:-", func(m map[string]any) {
			delete(env(m, "api"), "ADMIN_TOKEN_FILE")
			env(m, "api")["ADMIN_TOKEN"] = "${ADMIN_TOKEN:-change-me-change-me}"
		}},
		{"password inline", "no secret default", "secret POSTGRES_PASSWORD in the environment", func(m map[string]any) {
			delete(env(m, "postgres"), "POSTGRES_PASSWORD_FILE")
			env(m, "postgres")["POSTGRES_PASSWORD"] = "seckill"
		}},
		{"credentials in a URL", "no secret default", "DATABASE_URL carries credentials", func(m map[string]any) {
			delete(env(m, "api"), "DATABASE_URL_FILE")
			env(m, "api")["DATABASE_URL"] = "postgres://seckill:seckill@postgres:5432/seckill"
		}},
		{"secret from the environment", "no secret default", "secret admin_token: want a file", func(m map[string]any) {
			m["secrets"].(map[string]any)["admin_token"] = map[string]any{"environment": "ADMIN_TOKEN"}
		}},
		{"secret file with a default", "no secret default", "secrets.database_url.file", func(m map[string]any) {
			m["secrets"].(map[string]any)["database_url"] = map[string]any{"file": "${DATABASE_URL_PATH:-./dev-database-url}"}
		}},
		{"_FILE not mounted", "no secret default", "ADMIN_TOKEN_FILE does not name a secret", func(m map[string]any) {
			service(m, "api")["secrets"] = []any{"database_url"}
		}},
		{"buyer identity off", "buyer identity on", "AUTH_JWKS_FILE is not set", func(m map[string]any) {
			delete(env(m, "api"), "AUTH_JWKS_FILE")
		}},
		{"buyer identity without an issuer", "buyer identity on", "AUTH_ISSUER is empty", func(m map[string]any) {
			env(m, "api")["AUTH_ISSUER"] = ""
		}},
		{"grace of 30s", "grace above drain", "stop_grace_period 30s", func(m map[string]any) {
			service(m, "api")["stop_grace_period"] = "30s"
		}},
		{"no grace period", "grace above drain", "no stop_grace_period", func(m map[string]any) {
			delete(service(m, "api"), "stop_grace_period")
		}},
		{"SHUTDOWN_DELAY raised", "grace above drain", "stop_grace_period 55s", func(m map[string]any) {
			env(m, "api")["SHUTDOWN_DELAY"] = "15s"
		}},
		{"PURCHASE_TIMEOUT raised", "grace above drain", "stop_grace_period 55s", func(m map[string]any) {
			env(m, "api")["PURCHASE_TIMEOUT"] = "20s"
		}},
		{"one replica", "replicas behind lb", "1 replicas", func(m map[string]any) {
			service(m, "api")["deploy"] = map[string]any{"replicas": 1}
		}},
		{"api publishes a port", "replicas behind lb", "api: publishes host port 8081", func(m map[string]any) {
			service(m, "api")["ports"] = []any{"127.0.0.1:8081:8080"}
		}},
		{"no load balancer", "replicas behind lb", "no lb service", func(m map[string]any) {
			delete(m["services"].(map[string]any), "lb")
		}},
		{"lb on every interface", "loopback ports", `lb: port 8080 published on ""`, func(m map[string]any) {
			service(m, "lb")["ports"] = []any{"8080:8080"}
		}},
		{"redis without AOF", "redis appendfsync", "want --appendonly yes", func(m map[string]any) {
			service(m, "redis")["command"] = []any{"redis-server", "--save", "", "--appendonly", "no"}
		}},
		{"rules not mounted", "observability mounted", "deploy/prometheus/rules", func(m map[string]any) {
			service(m, "prometheus")["volumes"] = []any{"./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := mutateCompose(t, tc.mutate)
			if err != nil {
				t.Fatalf("load the mutated copy: %v", err)
			}
			errs := composeChecks[tc.check](t, c)
			var msgs []string
			for _, err := range errs {
				msgs = append(msgs, err.Error())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tc.want) {
				t.Fatalf("check %q on the mutated copy: got %q, want an error containing %q", tc.check, msgs, tc.want)
			}
		})
	}
}

func TestDockerfileControl(t *testing.T) {
	if errs := checkDockerfile("FROM golang:1.26 AS build\nFROM build\nFROM gcr.io/distroless/static-debian12:nonroot\n"); len(errs) != 0 {
		t.Fatalf("pinned Dockerfile rejected: %v", errs)
	}
	for _, from := range []string{"FROM golang AS build\n", "FROM gcr.io/distroless/static-debian12:latest\n"} {
		if errs := checkDockerfile(from); len(errs) == 0 {
			t.Errorf("%q: accepted, want not pinned", from)
		}
	}
}
