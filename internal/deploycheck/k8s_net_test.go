package deploycheck_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// apiJob is the scrape job deploy/prometheus's rules and the Grafana dashboard select.
const apiJob = "seckill-api"

// postgresPort is PostgreSQL's, for a DATABASE_URL that names none.
const postgresPort = 5432

// addrPort is the port of a listen address or host:port (":8080"), or of a URL.
func addrPort(addr string) (int32, error) {
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		addr = u.Host
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(port, 10, 32)
	return int32(n), err
}

// ports are the API's listeners as the container's environment sets them: public (HTTP_ADDR)
// and metrics, the one that serves /metrics and the admin routes: ADMIN_ADDR's when it is set,
// else the public one.
func (r rendered) ports(t *testing.T) (public, metrics int32, err error) {
	env := r.env(r.api())
	addr, ok := env["HTTP_ADDR"]
	if !ok {
		addr = apiDefault(t, "HTTP_ADDR")
	}
	if public, err = addrPort(addr); err != nil {
		return 0, 0, fmt.Errorf("HTTP_ADDR %q: %w", addr, err)
	}
	metrics = public
	if admin := env["ADMIN_ADDR"]; admin != "" {
		if metrics, err = addrPort(admin); err != nil {
			return 0, 0, fmt.Errorf("ADMIN_ADDR %q: %w", admin, err)
		}
	}
	return public, metrics, nil
}

// containerPort resolves p, a port by name or number, to a port the API's container declares.
func (r rendered) containerPort(p intstr.IntOrString) (int32, bool) {
	for _, cp := range r.api().Ports {
		if p.Type == intstr.String && cp.Name == p.StrVal || p.Type == intstr.Int && cp.ContainerPort == p.IntVal {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

func checkK8sScrape(t *testing.T, r rendered) []error {
	_, metrics, err := r.ports(t)
	if err != nil {
		return []error{err}
	}
	var errs []error
	if _, ok := r.containerPort(intstr.FromInt32(metrics)); !ok {
		errs = append(errs, fmt.Errorf("api: port %d serves /metrics, and the container does not declare it", metrics))
	}
	tpl := r.deployment().Spec.Template
	a := tpl.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != strconv.Itoa(int(metrics)) || a["prometheus.io/path"] != "/metrics" {
		errs = append(errs, fmt.Errorf("pod annotations prometheus.io/scrape %q, port %q, path %q: want true, %d (the port that serves /metrics) and /metrics",
			a["prometheus.io/scrape"], a["prometheus.io/port"], a["prometheus.io/path"], metrics))
	}
	for _, pm := range r.podMonitors {
		sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(tpl.Labels)) {
			errs = append(errs, fmt.Errorf("PodMonitor %s: selector %v does not select the API's pods %v", pm.Metadata.Name, pm.Spec.Selector, tpl.Labels))
		}
		if job := tpl.Labels[pm.Spec.JobLabel]; pm.Spec.JobLabel == "" || job != apiJob {
			errs = append(errs, fmt.Errorf("PodMonitor %s: jobLabel %q gives the job %q, want %s, the job the rules and the dashboard select", pm.Metadata.Name, pm.Spec.JobLabel, job, apiJob))
		}
		if len(pm.Spec.PodMetricsEndpoints) == 0 {
			errs = append(errs, fmt.Errorf("PodMonitor %s: no podMetricsEndpoints", pm.Metadata.Name))
		}
		for _, e := range pm.Spec.PodMetricsEndpoints {
			if p, ok := r.containerPort(intstr.FromString(e.Port)); !ok || p != metrics || e.Path != "" && e.Path != "/metrics" {
				errs = append(errs, fmt.Errorf("PodMonitor %s: endpoint port %q path %q, want the port that serves /metrics (%d) and /metrics", pm.Metadata.Name, e.Port, e.Path, metrics))
			}
		}
	}
	rules, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "prometheus", "rules", "seckill.rules.yml"))
	if err != nil || !strings.Contains(string(rules), `job="`+apiJob+`"`) {
		errs = append(errs, fmt.Errorf("deploy/prometheus's rules do not select job %q (%v): the scrape's job name is wrong here", apiJob, err))
	}
	return errs
}

// backendPorts are the ports the API's pods reach: each container's PostgreSQL (or
// PgBouncer), and the ports of the ConfigMap's Redis and etcd addresses.
func (r rendered) backendPorts() (map[int32]string, error) {
	ports := map[int32]string{}
	for _, c := range r.allContainers() {
		ports[r.databasePort(&c)] = "DATABASE_URL of " + c.Name
	}
	env := r.env(r.api())
	for _, name := range []string{"REDIS_ADDR", "REDIS_CLUSTER_ADDRS", "REDIS_SENTINEL_ADDRS", "REDLOCK_ADDRS", "ETCD_ENDPOINTS"} {
		for a := range strings.SplitSeq(env[name], ",") {
			if a = strings.TrimSpace(a); a == "" {
				continue
			}
			p, err := addrPort(a)
			if err != nil {
				return nil, fmt.Errorf("%s %q: %w", name, a, err)
			}
			ports[p] = name
		}
	}
	return ports, nil
}

// databasePort is the port of the URL in the Secret key that container c's DATABASE_URL_FILE
// names, or PostgreSQL's when that holds no URL with a port (the test's placeholders).
func (r rendered) databasePort(c *corev1.Container) int32 {
	var file string
	for _, e := range c.Env {
		if e.Name == "DATABASE_URL_FILE" {
			file = e.Value
		}
	}
	for _, m := range c.VolumeMounts {
		if file == "" || path.Dir(file) != path.Clean(m.MountPath) {
			continue
		}
		for _, v := range r.deployment().Spec.Template.Spec.Volumes {
			for _, s := range r.secrets {
				if v.Name != m.Name || v.Secret == nil || v.Secret.SecretName != s.Name {
					continue
				}
				if p, err := addrPort(strings.TrimSpace(string(s.Data[path.Base(file)]))); err == nil {
					return p
				}
			}
		}
	}
	return postgresPort
}

func checkK8sNetworkPolicy(t *testing.T, r rendered) []error {
	pods := labels.Set(r.deployment().Spec.Template.Labels)
	var errs []error
	var selecting []*networkingv1.NetworkPolicy
	for _, np := range r.networkPolicies {
		if sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector); err == nil && !sel.Empty() && sel.Matches(pods) {
			selecting = append(selecting, np)
		}
	}
	if len(selecting) != 1 {
		return []error{fmt.Errorf("%d NetworkPolicies select the API's pods, want one", len(selecting))}
	}
	np := selecting[0]
	if strings.Join(policyTypes(np), ",") != "Ingress,Egress" {
		errs = append(errs, fmt.Errorf("NetworkPolicy %s: policyTypes %v, want Ingress and Egress", np.Name, np.Spec.PolicyTypes))
	}
	public, metrics, err := r.ports(t)
	if err != nil {
		return append(errs, err)
	}
	peersOf := map[int32]map[string]bool{} // container port to the peers allowed to it, as JSON
	for i, rule := range np.Spec.Ingress {
		if len(rule.From) == 0 || len(rule.Ports) == 0 {
			errs = append(errs, fmt.Errorf("NetworkPolicy %s: ingress rule %d allows every peer or every port", np.Name, i))
		}
		for _, p := range rule.Ports {
			cp, ok := r.containerPort(ptrOr(p.Port, intstr.FromInt32(0)))
			if !ok {
				errs = append(errs, fmt.Errorf("NetworkPolicy %s: ingress to port %v, which the API does not declare", np.Name, p.Port))
				continue
			}
			if peersOf[cp] == nil {
				peersOf[cp] = map[string]bool{}
			}
			for _, peer := range rule.From {
				b, _ := json.Marshal(peer)
				peersOf[cp][string(b)] = true
			}
		}
		errs = append(errs, peersSelectingAPI(np.Name, "ingress", rule.From, pods)...)
	}
	for _, p := range []int32{public, metrics} {
		if len(peersOf[p]) == 0 {
			errs = append(errs, fmt.Errorf("NetworkPolicy %s: no ingress to port %d, which the API serves", np.Name, p))
		}
	}
	if metrics != public {
		for peer := range peersOf[public] {
			if peersOf[metrics][peer] {
				errs = append(errs, fmt.Errorf("NetworkPolicy %s: %s may reach both the public port %d and the metrics and admin port %d", np.Name, peer, public, metrics))
			}
		}
	}
	backends, err := r.backendPorts()
	if err != nil {
		return append(errs, err)
	}
	allowed := map[string]bool{}
	for i, rule := range np.Spec.Egress {
		if len(rule.Ports) == 0 {
			errs = append(errs, fmt.Errorf("NetworkPolicy %s: egress rule %d allows every port", np.Name, i))
		}
		for _, p := range rule.Ports {
			proto := string(ptrOr(p.Protocol, corev1.ProtocolTCP))
			port := ptrOr(p.Port, intstr.FromInt32(0))
			_, backend := backends[port.IntVal]
			if port.Type != intstr.Int || p.EndPort != nil || !(port.IntVal == 53 || backend && proto == "TCP") {
				errs = append(errs, fmt.Errorf("NetworkPolicy %s: egress to %s %s, which is neither DNS nor a backend of the API %v", np.Name, proto, port.String(), backends))
			}
			allowed[proto+" "+port.String()] = true
		}
		errs = append(errs, peersSelectingAPI(np.Name, "egress", rule.To, pods)...)
	}
	for port, what := range backends {
		if !allowed["TCP "+strconv.Itoa(int(port))] {
			errs = append(errs, fmt.Errorf("NetworkPolicy %s: no egress to TCP %d (%s)", np.Name, port, what))
		}
	}
	for _, dns := range []string{"UDP 53", "TCP 53"} {
		if !allowed[dns] {
			errs = append(errs, fmt.Errorf("NetworkPolicy %s: no egress to DNS (%s)", np.Name, dns))
		}
	}
	return errs
}

// peersSelectingAPI reports the peers of other namespaces whose pod selector requires one of
// the API's own labels: kustomize's labels (includeSelectors) add them to a peer's
// matchLabels, and then the peer (kube-dns, an ingress controller) is no longer selected.
func peersSelectingAPI(policy, dir string, peers []networkingv1.NetworkPolicyPeer, pods labels.Set) []error {
	var errs []error
	for _, p := range peers {
		if p.PodSelector == nil || p.NamespaceSelector == nil {
			continue
		}
		for k, v := range p.PodSelector.MatchLabels {
			if pods[k] == v {
				errs = append(errs, fmt.Errorf("NetworkPolicy %s: %s peer in namespaces %v selects pods labelled %s=%s, the API's own label, which the pods it means lack",
					policy, dir, p.NamespaceSelector.MatchLabels, k, v))
			}
		}
	}
	return errs
}

func policyTypes(np *networkingv1.NetworkPolicy) []string {
	var out []string
	for _, p := range np.Spec.PolicyTypes {
		out = append(out, string(p))
	}
	return out
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
