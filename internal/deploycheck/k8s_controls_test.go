package deploycheck_test

import (
	"strings"
	"testing"
)

// TestKustomizeControls proves each check can fail: every mutated copy of the manifests,
// rendered with the PodMonitor component, is rejected, by the strict decoding or by the check
// named.
func TestKustomizeControls(t *testing.T) {
	const (
		dep            = "base/deployment.yaml"
		cm             = "base/configmap.yaml"
		netpol         = "base/networkpolicy.yaml"
		ingress        = overlay + "/ingress.yaml"
		monitor        = podMonitorComponent + "/podmonitor.yaml"
		spreadSelector = "          labelSelector:\n            matchLabels:\n              app.kubernetes.io/name: seckill-api\n"
		startupProbe   = "          startupProbe:\n            httpGet:\n              path: /healthz\n              port: http\n            periodSeconds: 2\n            timeoutSeconds: 2\n            failureThreshold: 40\n"
		dnsEgress      = "    - to:\n"
		// The overlay's last patch, and one after it that opens the pods' port to every peer
		// (a patch of the overlay's own, so that it holds whatever components it lists).
		etcdPatch   = "        value: http://etcd.seckill-data.svc:2379\n"
		openIngress = "  - target:\n      kind: NetworkPolicy\n      name: seckill-api\n    patch: |-\n      - op: add\n        path: /spec/ingress/-\n        value:\n          ports:\n            - port: http\n"
	)
	cases := []struct {
		name, file, old, new string
		check, want          string // check "" means the render or the strict decoding fails
	}{
		{"unknown field", dep, "  replicas: 3\n", "  replicas: 3\n  replica: 3\n", "", `unknown field "replica"`},
		{"identity off", dep, "            - name: AUTH_JWKS_FILE\n              value: /run/auth/buyer-jwks.json\n", "", "buyer identity", "AUTH_JWKS_FILE is not set"},
		{"no issuer", dep, "              value: https://id.example.com/\n", "              value: \"\"\n", "buyer identity", "AUTH_ISSUER is empty"},
		{"JWKS by subPath", dep, "            - name: buyer-jwks\n              mountPath: /run/auth\n", "            - name: buyer-jwks\n              mountPath: /run/auth/buyer-jwks.json\n              subPath: buyer-jwks.json\n", "buyer identity", "subPath"},
		{"JWKS not mounted", dep, "            - name: buyer-jwks\n              mountPath: /run/auth\n              readOnly: true\n", "", "secrets from files", "AUTH_JWKS_FILE"},
		{"misplaced field", dep, "            periodSeconds: 10\n", "            periodSeconds: 10\n            path: /healthz\n", "", "unknown field"},
		{"latest image", overlay + "/kustomization.yaml", `newTag: "1.0.0"`, `newTag: latest`, "images pinned", "seckill-api:latest"},
		{"one replica", dep, "replicas: 3", "replicas: 1", "replicas and probes", "1 replicas"},
		{"readiness on healthz", dep, "path: /readyz", "path: /healthz", "replicas and probes", "readiness probe"},
		{"no liveness", dep, "          livenessProbe:\n            httpGet:\n              path: /healthz\n              port: http\n            periodSeconds: 10\n            timeoutSeconds: 3\n            failureThreshold: 3\n", "", "replicas and probes", "liveness probe"},
		{"no preStop", dep, "            preStop:\n              sleep:\n                seconds: 5\n", "            preStop: null\n", "shutdown", "no preStop sleep"},
		{"SHUTDOWN_DELAY below readiness", "base/configmap.yaml", "SHUTDOWN_DELAY: 5s", "SHUTDOWN_DELAY: 1s", "shutdown", "SHUTDOWN_DELAY 1s"},
		{"grace of 30s", dep, "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 30", "shutdown", "terminationGracePeriodSeconds 30s"},
		{"SHUTDOWN_TIMEOUT raised", "base/configmap.yaml", "  LOG_LEVEL: info\n", "  LOG_LEVEL: info\n  SHUTDOWN_TIMEOUT: 50s\n", "shutdown", "terminationGracePeriodSeconds 1m0s"},
		{"no resources", dep, "            limits:\n              memory: 512Mi\n", "", "resources and security", "api: no memory limit"},
		{"writable root", dep, "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "resources and security", "read-only root filesystem"},
		{"root user", dep, "runAsUser: 65532", "runAsUser: 0", "resources and security", "runs as root"},
		{"token in the ConfigMap", "base/configmap.yaml", "  LOG_LEVEL: info\n", "  LOG_LEVEL: info\n  ADMIN_TOKEN: change-me-change-me\n", "secrets from files", "ADMIN_TOKEN"},
		{"secret in env", dep, "            - name: ADMIN_TOKEN_FILE\n              value: /run/secrets/seckill/admin-token\n", "            - name: ADMIN_TOKEN\n              value: change-me-change-me\n", "secrets from files", "ADMIN_TOKEN"},
		{"file not in the Secret", dep, "/run/secrets/seckill/redis-password", "/run/secrets/seckill/redis-pass", "secrets from files", "redis-pass"},
		{"replicas migrate", "base/configmap.yaml", `MIGRATE_ON_START: "false"`, `MIGRATE_ON_START: "true"`, "migrations", "MIGRATE_ON_START"},
		{"no migration", dep, `args: ["migrate"]`, `args: ["version"]`, "migrations", "no init container"},
		{"service selects nothing", "base/service.yaml", "targetPort: http", "targetPort: web", "service and budget", "targetPort web"},
		{"budget allows all", "base/pdb.yaml", "maxUnavailable: 1", "maxUnavailable: 3", "service and budget", "maxUnavailable 3"},
		{"misspelt setting", cm, "SHUTDOWN_DELAY: 5s", "SHUTDOWN_DELAYS: 5s", "settings known", "SHUTDOWN_DELAYS is no variable"},
		{"spread without a selector", dep, spreadSelector, "", "spread", "no labelSelector, so it counts no pod"},
		{"spread selector matching no pod", dep, spreadSelector, "          labelSelector:\n            matchLabels:\n              app: seckill\n", "spread", "matches no pod of the API"},
		{"spread over nodes soft", dep, "whenUnsatisfiable: DoNotSchedule", "whenUnsatisfiable: ScheduleAnyway", "spread", "hostname: whenUnsatisfiable ScheduleAnyway, want DoNotSchedule"},
		{"spread without pod-template-hash", dep, "          matchLabelKeys: [pod-template-hash]\n", "", "spread", "lacks pod-template-hash"},
		{"spread counting tainted nodes", dep, "          nodeTaintsPolicy: Honor\n", "", "spread", "without nodeTaintsPolicy Honor"},
		{"no zone spread", dep, "topologyKey: topology.kubernetes.io/zone", "topologyKey: topology.kubernetes.io/region", "spread", "0 spread constraints over topology.kubernetes.io/zone"},
		{"no startup probe", dep, startupProbe, "", "startup", "no startup probe: start-up may wait STARTUP_TIMEOUT 1m0s for PostgreSQL, and the liveness probe restarts it after 30s"},
		{"startup probe too short", dep, "failureThreshold: 40", "failureThreshold: 30", "startup", "gives up after 1m0s"},
		{"STARTUP_TIMEOUT raised", cm, "  LOG_LEVEL: info\n", "  LOG_LEVEL: info\n  STARTUP_TIMEOUT: 90s\n", "startup", "STARTUP_TIMEOUT 1m30s"},
		{"GOMEMLIMIT fixed", dep, "value: $(MEMORY_LIMIT_MIB)000000", "value: 460MiB", "memory limit", "not set from the container's memory limit"},
		{"no GOMEMLIMIT", dep, "            - name: GOMEMLIMIT\n              value: $(MEMORY_LIMIT_MIB)000000\n", "", "memory limit", "not set from the container's memory limit"},
		{"GOMEMLIMIT in MB", dep, "$(MEMORY_LIMIT_MIB)000000", "$(MEMORY_LIMIT_MIB)MB", "memory limit", `refuses GOMEMLIMIT="512MB"`},
		{"GOMEMLIMIT above the limit", dep, "divisor: 1Mi", `divisor: "1"`, "memory limit", "want 85% to 99%"},
		{"more replicas", dep, "replicas: 3", "replicas: 5", "connection budget", "more than max_connections 200"},
		{"bigger pools", cm, `DB_MAX_CONNS: "20"`, `DB_MAX_CONNS: "30"`, "connection budget", "223 connections, more than max_connections 200"},
		{"budget undeclared", dep, "    seckill/postgres-max-connections: \"200\"\n", "", "connection budget", "seckill/postgres-max-connections"},
		{"scrape on another path", dep, "prometheus.io/path: /metrics", "prometheus.io/path: /stats", "scrape", `path "/stats"`},
		{"PodMonitor selects nothing", monitor, "  selector:\n    matchLabels:\n      app.kubernetes.io/name: seckill-api\n", "  selector:\n    matchLabels:\n      app.kubernetes.io/name: seckill\n", "scrape", "does not select the API's pods"},
		{"PodMonitor's job", monitor, "jobLabel: app.kubernetes.io/name", "jobLabel: app.kubernetes.io/part-of", "scrape", `gives the job "seckill"`},
		{"PodMonitor's path", monitor, "      path: /metrics", "      path: /stats", "scrape", `path "/stats"`},
		{"policy selects nothing", netpol, "  podSelector:\n    matchLabels:\n      app.kubernetes.io/name: seckill-api\n", "  podSelector:\n    matchLabels:\n      app: seckill\n", "network policy", "0 NetworkPolicies select"},
		{"ingress from everywhere", overlay + "/kustomization.yaml", etcdPatch, etcdPatch + openIngress, "network policy", "allows every peer or every port"},
		{"egress to 443", netpol, "    - ports:\n        - port: 5432", "    - ports:\n        - port: 443\n          protocol: TCP\n        - port: 5432", "network policy", "egress to TCP 443"},
		{"egress to every port", netpol, "    - ports:\n        - port: 5432", "    - to: []\n    - ports:\n        - port: 5432", "network policy", "allows every port"},
		{"no DNS", netpol, "        - port: 53\n          protocol: UDP\n", "", "network policy", "no egress to DNS (UDP 53)"},
		{"DNS peer by matchLabels", netpol, "            matchExpressions:\n              - {key: k8s-app, operator: In, values: [kube-dns]}\n", "            matchLabels:\n              k8s-app: kube-dns\n", "network policy", "app.kubernetes.io/name=seckill-api, the API's own label"},
		{"Redis elsewhere", overlay + "/kustomization.yaml", "redis.seckill-data.svc:6379", "redis.seckill-data.svc:6380", "network policy", "no egress to TCP 6380 (REDIS_ADDR)"},
		{"Ingress routes all", ingress, "          - path: /api/v1/\n", "          - path: /\n", "public path", "routes /metrics to port 8080"},
		{"Ingress routes no purchase", ingress, "path: /api/v1/", "path: /api/v2/", "public path", "sends a purchase to ports []"},
		{"LoadBalancer Service", "base/service.yaml", "type: ClusterIP", "type: LoadBalancer", "public path", "type LoadBalancer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := k8sFiles(t)
			changed := strings.ReplaceAll(files[tc.file], tc.old, tc.new)
			if changed == files[tc.file] {
				t.Fatalf("%s does not hold %q: the control changes nothing", tc.file, tc.old)
			}
			files[tc.file] = changed
			r, err := renderK8s(withPodMonitor(files))
			if tc.check == "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("render of the mutated copy: got %v, want an error containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("render of the mutated copy: %v", err)
			}
			var msgs []string
			for _, err := range k8sChecks[tc.check](t, r) {
				msgs = append(msgs, err.Error())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tc.want) {
				t.Fatalf("check %q on the mutated copy: got %q, want an error containing %q", tc.check, msgs, tc.want)
			}
		})
	}
}
