package deploycheck_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// overlay is the overlay the tests render, under deploy/k8s.
const overlay = "overlays/production"

// rendered is what `kubectl apply -k` of the overlay would send, decoded into the API types.
type rendered struct {
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	configMaps  []*corev1.ConfigMap
	secrets     []*corev1.Secret
	pdbs        []*policyv1.PodDisruptionBudget
}

// k8sFiles reads deploy/k8s into a map of its files (path relative to deploy/k8s), with
// placeholder secret files for the overlay's secretGenerator, as an operator makes them.
func k8sFiles(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join(repoRoot, "deploy", "k8s")
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"admin-token", "database-url", "redis-password"} {
		files[overlay+"/secrets/"+name] = "placeholder-" + name + "\n"
	}
	return files
}

// renderK8s renders the overlay from files with krusty, in memory, and decodes every object
// strictly: a field the API types do not have fails, as the API server would reject it.
func renderK8s(files map[string]string) (rendered, error) {
	fsys := filesys.MakeFsInMemory()
	for path, text := range files {
		if err := fsys.MkdirAll(filepath.Dir("/k8s/" + path)); err != nil {
			return rendered{}, err
		}
		if err := fsys.WriteFile("/k8s/"+path, []byte(text)); err != nil {
			return rendered{}, err
		}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, "/k8s/"+overlay)
	if err != nil {
		return rendered{}, fmt.Errorf("kustomize build: %w", err)
	}
	var r rendered
	for _, res := range m.Resources() {
		text, err := res.AsYAML()
		if err != nil {
			return rendered{}, err
		}
		var obj any
		switch gvk := res.GetGvk(); gvk.ApiVersion() + " " + gvk.Kind {
		case "apps/v1 Deployment":
			d := new(appsv1.Deployment)
			r.deployments, obj = append(r.deployments, d), d
		case "v1 Service":
			s := new(corev1.Service)
			r.services, obj = append(r.services, s), s
		case "v1 ConfigMap":
			c := new(corev1.ConfigMap)
			r.configMaps, obj = append(r.configMaps, c), c
		case "v1 Secret":
			s := new(corev1.Secret)
			r.secrets, obj = append(r.secrets, s), s
		case "policy/v1 PodDisruptionBudget":
			p := new(policyv1.PodDisruptionBudget)
			r.pdbs, obj = append(r.pdbs, p), p
		default:
			return rendered{}, fmt.Errorf("%s %s: a kind this test does not know", gvk, res.GetName())
		}
		if err := yaml.UnmarshalStrict(text, obj); err != nil {
			return rendered{}, fmt.Errorf("%s %s: %w", res.GetKind(), res.GetName(), err)
		}
	}
	return r, nil
}

func TestKustomize(t *testing.T) {
	r, err := renderK8s(k8sFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.deployments) != 1 || len(r.services) != 1 || len(r.pdbs) != 1 || len(r.configMaps) != 1 || len(r.secrets) != 1 {
		t.Fatalf("rendered %d Deployments, %d Services, %d PodDisruptionBudgets, %d ConfigMaps, %d Secrets; want one of each",
			len(r.deployments), len(r.services), len(r.pdbs), len(r.configMaps), len(r.secrets))
	}
	for name, check := range k8sChecks {
		for _, err := range check(t, r) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestKustomizeControls proves each check can fail: every mutated copy of the manifests is
// rejected, by the strict decoding or by the check named.
func TestKustomizeControls(t *testing.T) {
	const dep = "base/deployment.yaml"
	cases := []struct {
		name, file, old, new string
		check, want          string // check "" means the render or the strict decoding fails
	}{
		{"unknown field", dep, "  replicas: 3\n", "  replicas: 3\n  replica: 3\n", "", `unknown field "replica"`},
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := k8sFiles(t)
			changed := strings.ReplaceAll(files[tc.file], tc.old, tc.new)
			if changed == files[tc.file] {
				t.Fatalf("%s does not hold %q: the control changes nothing", tc.file, tc.old)
			}
			files[tc.file] = changed
			r, err := renderK8s(files)
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
