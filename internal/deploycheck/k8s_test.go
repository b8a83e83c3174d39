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
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// overlay is the overlay the tests render, under deploy/k8s, and the optional components
// they render it with too.
const (
	overlay                = "overlays/production"
	podMonitorComponent    = "components/podmonitor"
	adminListenerComponent = "components/admin-listener"
)

// rendered is what `kubectl apply -k` of the overlay would send, decoded into the API types.
type rendered struct {
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	configMaps      []*corev1.ConfigMap
	secrets         []*corev1.Secret
	pdbs            []*policyv1.PodDisruptionBudget
	networkPolicies []*networkingv1.NetworkPolicy
	ingresses       []*networkingv1.Ingress
	podMonitors     []*podMonitor
}

// podMonitor is the part of the Prometheus Operator's PodMonitor (monitoring.coreos.com/v1)
// that the checks read. k8s.io/api has no type for it: it is decoded loosely, so a field
// the operator does not know is not caught here.
type podMonitor struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		JobLabel            string               `json:"jobLabel"`
		Selector            metav1.LabelSelector `json:"selector"`
		PodMetricsEndpoints []struct {
			Port string `json:"port"`
			Path string `json:"path"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// withComponents returns files with the overlay rendering the components named too, in order,
// before those it lists already.
func withComponents(files map[string]string, components ...string) map[string]string {
	out := make(map[string]string, len(files))
	for k, v := range files {
		out[k] = v
	}
	var list strings.Builder
	for _, c := range components {
		list.WriteString("  - ../../" + c + "\n")
	}
	k := overlay + "/kustomization.yaml"
	if strings.HasPrefix(out[k], "components:\n") || strings.Contains(out[k], "\ncomponents:\n") {
		out[k] = strings.Replace(out[k], "components:\n", "components:\n"+list.String(), 1)
	} else {
		out[k] += "components:\n" + list.String()
	}
	return out
}

// withPodMonitor returns files with the overlay rendering the PodMonitor component too.
func withPodMonitor(files map[string]string) map[string]string {
	return withComponents(files, podMonitorComponent)
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
	for _, name := range []string{"admin-token", "database-url", "redis-password", "buyer-jwks.json"} {
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
		case "networking.k8s.io/v1 NetworkPolicy":
			n := new(networkingv1.NetworkPolicy)
			r.networkPolicies, obj = append(r.networkPolicies, n), n
		case "networking.k8s.io/v1 Ingress":
			i := new(networkingv1.Ingress)
			r.ingresses, obj = append(r.ingresses, i), i
		case "monitoring.coreos.com/v1 PodMonitor":
			p := new(podMonitor)
			if err := yaml.Unmarshal(text, p); err != nil {
				return rendered{}, fmt.Errorf("PodMonitor %s: %w", res.GetName(), err)
			}
			r.podMonitors = append(r.podMonitors, p)
			continue
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
	for _, tc := range []struct {
		name        string
		files       map[string]string
		podMonitors int
	}{
		{overlay, k8sFiles(t), 0},
		{overlay + " with " + podMonitorComponent, withPodMonitor(k8sFiles(t)), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := renderK8s(tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.deployments) != 1 || len(r.services) != 1 || len(r.pdbs) != 1 || len(r.configMaps) != 1 || len(r.secrets) != 2 ||
				len(r.networkPolicies) != 1 || len(r.ingresses) != 1 || len(r.podMonitors) != tc.podMonitors {
				t.Fatalf("rendered %d Deployments, %d Services, %d PodDisruptionBudgets, %d ConfigMaps, %d Secrets, %d NetworkPolicies, %d Ingresses, %d PodMonitors; "+
					"want one of each but two Secrets (the API's, the buyers' JWKS), and %d PodMonitors", len(r.deployments), len(r.services), len(r.pdbs), len(r.configMaps), len(r.secrets),
					len(r.networkPolicies), len(r.ingresses), len(r.podMonitors), tc.podMonitors)
			}
			for name, check := range k8sChecks {
				for _, err := range check(t, r) {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	}
}
