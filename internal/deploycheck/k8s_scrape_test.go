package deploycheck_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// podIP is where the test's discovered pods are: TEST-NET-1, which nothing answers.
const podIP = "192.0.2.10"

// TestKubernetesScrapeJob runs deploy/k8s/scrape/prometheus.yml's job in a real Prometheus,
// its Kubernetes discovery replaced by the targets it would discover (Debian's Prometheus is
// built without Kubernetes discovery): each port of an API pod annotated as the render
// annotates it, a port of another of its containers, and a pod of another app annotated alike. Exactly one target must be kept,
// in job seckill-api, at the pod's IP, the annotated port and path; and one per port of the
// pod without the rule that keeps the annotated port.
func TestKubernetesScrapeJob(t *testing.T) {
	servers.PrometheusBin(t) // skip before rendering anything
	r, err := renderK8s(k8sFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	tpl := r.deployment().Spec.Template
	text, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "k8s", "scrape", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []map[string]any `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(text, &cfg); err != nil || len(cfg.ScrapeConfigs) != 1 {
		t.Fatalf("deploy/k8s/scrape/prometheus.yml: %v; want one scrape job, got %d", err, len(cfg.ScrapeConfigs))
	}
	job := cfg.ScrapeConfigs[0]
	if job["job_name"] != apiJob || job["kubernetes_sd_configs"] == nil {
		t.Fatalf("job %v with kubernetes_sd_configs %v: want job %s discovering pods", job["job_name"], job["kubernetes_sd_configs"], apiJob)
	}
	delete(job, "kubernetes_sd_configs")
	// What the pod role discovers: a target per declared port of each container.
	meta := func(pod, app string, port int32, annotations map[string]string) map[string]any {
		labels := map[string]string{
			"__meta_kubernetes_namespace": "seckill", "__meta_kubernetes_pod_name": pod, "__meta_kubernetes_pod_ip": podIP,
			"__meta_kubernetes_pod_label_app_kubernetes_io_name": app,
			"__meta_kubernetes_pod_container_port_number":        strconv.Itoa(int(port)),
		}
		for k, v := range annotations {
			labels["__meta_kubernetes_pod_annotation_"+strings.NewReplacer(".", "_", "/", "_", "-", "_").Replace(k)] = v
		}
		return map[string]any{"targets": []string{fmt.Sprintf("%s:%d", podIP, port)}, "labels": labels}
	}
	app, ports := tpl.Labels["app.kubernetes.io/name"], tpl.Spec.Containers[0].Ports
	var targets []any
	for _, p := range ports {
		targets = append(targets, meta("seckill-api-1", app, p.ContainerPort, tpl.Annotations))
	}
	targets = append(targets, meta("seckill-api-1", app, 9999, tpl.Annotations), // a port of another container
		meta("other-1", "other", ports[0].ContainerPort, tpl.Annotations))
	job["static_configs"] = targets
	want := fmt.Sprintf("http://%s:%s%s", podIP, tpl.Annotations["prometheus.io/port"], tpl.Annotations["prometheus.io/path"])
	if got := activeTargets(t, job, len(targets)); len(got) != 1 || got[0].ScrapeURL != want || got[0].Labels["job"] != apiJob || got[0].Labels["pod"] != "seckill-api-1" {
		t.Fatalf("active targets %+v, want one: %s in job %s, pod seckill-api-1", got, want, apiJob)
	}
	// The control: without its keepequal rule, the job scrapes each port of the pod.
	wantAll := len(ports) + 1
	var rules []any
	for _, r := range job["relabel_configs"].([]any) {
		if r.(map[string]any)["action"] != "keepequal" {
			rules = append(rules, r)
		}
	}
	job["relabel_configs"] = rules
	if got := activeTargets(t, job, len(targets)); len(got) != wantAll {
		t.Fatalf("without keepequal: active targets %+v, want the %d ports of the pod", got, wantAll)
	}
}

type activeTarget struct {
	Labels    map[string]string
	ScrapeURL string `json:"scrapeUrl"`
}

// activeTargets starts a Prometheus with the scrape job job alone, waits until it has
// discovered all n of its targets, and returns those it keeps.
func activeTargets(t *testing.T, job map[string]any, n int) []activeTarget {
	t.Helper()
	config, err := yaml.Marshal(map[string]any{"scrape_configs": []any{job}})
	if err != nil {
		t.Fatal(err)
	}
	prom := servers.StartPrometheus(t, map[string]string{"prometheus.yml": string(config)})
	var res struct {
		Data struct {
			ActiveTargets  []activeTarget
			DroppedTargets []json.RawMessage
		}
	}
	testenv.Eventually(t, 20*time.Second, "Prometheus to discover the targets it is given", func() bool {
		time.Sleep(100 * time.Millisecond)
		resp, err := http.Get(prom.URL + "/api/v1/targets")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&res) == nil && len(res.Data.ActiveTargets)+len(res.Data.DroppedTargets) == n
	})
	return res.Data.ActiveTargets
}
