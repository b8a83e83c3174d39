package deploycheck_test

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// goRuntimeVariables are read by the Go runtime of every binary, not by cmd/api's flags.
var goRuntimeVariables = map[string]bool{"GOMEMLIMIT": true, "GOGC": true, "GOMAXPROCS": true, "GODEBUG": true, "GOTRACEBACK": true}

// dependentVar matches a reference to another variable in an env value, as the kubelet expands it.
var dependentVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkK8sSettingsKnown: every variable the ConfigMap and the containers set is one cmd/api
// reads (its usage names it), the Go runtime's, OpenTelemetry's, or one another variable of
// the container refers to. A misspelt setting is otherwise silently ignored.
func checkK8sSettingsKnown(t *testing.T, r rendered) []error {
	var errs []error
	known := apiVariables(t)
	ok := func(name string) bool {
		return known[name] || goRuntimeVariables[name] || strings.HasPrefix(name, "OTEL_")
	}
	for _, cm := range r.configMaps {
		for k := range cm.Data {
			if !ok(k) {
				errs = append(errs, fmt.Errorf("ConfigMap %s: %s is no variable cmd/api reads (api -h names none such)", cm.Name, k))
			}
		}
	}
	for _, c := range r.allContainers() {
		referred := map[string]bool{}
		for _, e := range c.Env {
			for _, m := range dependentVar.FindAllStringSubmatch(e.Value, -1) {
				referred[m[1]] = true
			}
		}
		for _, e := range c.Env {
			if !ok(e.Name) && !referred[e.Name] {
				errs = append(errs, fmt.Errorf("%s: %s is no variable cmd/api reads, and no other variable refers to it", c.Name, e.Name))
			}
		}
	}
	return errs
}

// resolvedEnv is the environment the kubelet gives container c: its ConfigMaps' data, then
// its own variables in order, each resourceFieldRef computed (rounded up to its divisor) and
// each $(VAR) of a value expanded from the variables before it.
func (r rendered) resolvedEnv(c *corev1.Container) (map[string]string, error) {
	env := r.env(c)
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil:
			v, err := r.resourceField(c, e.ValueFrom.ResourceFieldRef)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", e.Name, err)
			}
			env[e.Name] = v
		case e.ValueFrom == nil:
			env[e.Name] = dependentVar.ReplaceAllStringFunc(e.Value, func(ref string) string {
				if v, ok := env[ref[2:len(ref)-1]]; ok {
					return v
				}
				return ref
			})
		}
	}
	return env, nil
}

// resourceField is the value the downward API gives for ref, read in container c.
func (r rendered) resourceField(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	of := c
	if ref.ContainerName != "" {
		of = nil
		for _, o := range r.allContainers() {
			if o.Name == ref.ContainerName {
				of = &o
			}
		}
		if of == nil {
			return "", fmt.Errorf("resourceFieldRef names container %s, which the pod has not", ref.ContainerName)
		}
	}
	if ref.Resource != "limits.memory" {
		return "", fmt.Errorf("resourceFieldRef %s: this test reads limits.memory only", ref.Resource)
	}
	lim := of.Resources.Limits.Memory()
	if lim.IsZero() {
		return "", fmt.Errorf("container %s has no memory limit: the kubelet would give the node's allocatable memory", of.Name)
	}
	d := int64(1)
	if !ref.Divisor.IsZero() {
		d = ref.Divisor.Value()
	}
	return strconv.FormatInt((lim.Value()+d-1)/d, 10), nil
}

func checkK8sSpread(_ *testing.T, r rendered) []error {
	var errs []error
	spec := r.deployment().Spec.Template
	pods := labels.Set(spec.Labels)
	byKey := map[string]int{}
	for _, c := range spec.Spec.TopologySpreadConstraints {
		byKey[c.TopologyKey]++
		switch sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector); {
		case c.LabelSelector == nil:
			errs = append(errs, fmt.Errorf("spread over %s: no labelSelector, so it counts no pod and spreads nothing", c.TopologyKey))
		case err != nil:
			errs = append(errs, fmt.Errorf("spread over %s: labelSelector: %w", c.TopologyKey, err))
		case sel.Empty():
			errs = append(errs, fmt.Errorf("spread over %s: an empty labelSelector counts every pod of the namespace", c.TopologyKey))
		case !sel.Matches(pods):
			errs = append(errs, fmt.Errorf("spread over %s: labelSelector %s matches no pod of the API (labels %v)", c.TopologyKey, sel, pods))
		}
		if !strings.Contains(strings.Join(c.MatchLabelKeys, ","), "pod-template-hash") {
			errs = append(errs, fmt.Errorf("spread over %s: matchLabelKeys lacks pod-template-hash, so a rollout counts the old pods with the new", c.TopologyKey))
		}
		if c.MaxSkew != 1 {
			errs = append(errs, fmt.Errorf("spread over %s: maxSkew %d, want 1", c.TopologyKey, c.MaxSkew))
		}
		// Each key's rule, and why: docs/deployment.md#spread.
		switch want := map[string]corev1.UnsatisfiableConstraintAction{
			"kubernetes.io/hostname":      corev1.DoNotSchedule,
			"topology.kubernetes.io/zone": corev1.ScheduleAnyway,
		}[c.TopologyKey]; {
		case want == "":
			errs = append(errs, fmt.Errorf("spread over %s: a key this test does not know", c.TopologyKey))
		case c.WhenUnsatisfiable != want:
			errs = append(errs, fmt.Errorf("spread over %s: whenUnsatisfiable %s, want %s", c.TopologyKey, c.WhenUnsatisfiable, want))
		}
		if c.WhenUnsatisfiable == corev1.DoNotSchedule && (c.NodeTaintsPolicy == nil || *c.NodeTaintsPolicy != corev1.NodeInclusionPolicyHonor) {
			errs = append(errs, fmt.Errorf("spread over %s: a hard rule without nodeTaintsPolicy Honor counts nodes the pods may not run on (a tainted control plane) as empty places", c.TopologyKey))
		}
	}
	for _, key := range []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone"} {
		if byKey[key] != 1 {
			errs = append(errs, fmt.Errorf("%d spread constraints over %s, want one", byKey[key], key))
		}
	}
	return errs
}

// startMargin is how long cmd/api may take to start besides waiting for PostgreSQL: its
// clients of Redis and etcd, the app, its listener.
const startMargin = 10 * time.Second

// probeBudget is how long a probe that keeps failing takes to give up, with Kubernetes' defaults.
func probeBudget(p *corev1.Probe) time.Duration {
	period, threshold := p.PeriodSeconds, p.FailureThreshold
	if period == 0 {
		period = 10
	}
	if threshold == 0 {
		threshold = 3
	}
	return time.Duration(p.InitialDelaySeconds+period*threshold) * time.Second
}

func checkK8sStartup(t *testing.T, r rendered) []error {
	c := r.api()
	text, ok := r.env(c)["STARTUP_TIMEOUT"]
	if !ok {
		text = apiDefault(t, "STARTUP_TIMEOUT")
	}
	startup, err := time.ParseDuration(text)
	if err != nil {
		return []error{fmt.Errorf("STARTUP_TIMEOUT %q: %w", text, err)}
	}
	need := startup + startMargin
	p := c.StartupProbe
	if p == nil {
		why := "no liveness probe either"
		if c.LivenessProbe != nil {
			why = fmt.Sprintf("the liveness probe restarts it after %s", probeBudget(c.LivenessProbe))
		}
		return []error{fmt.Errorf("api: no startup probe: start-up may wait STARTUP_TIMEOUT %s for PostgreSQL, and %s", startup, why)}
	}
	var errs []error
	if p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "http" {
		errs = append(errs, fmt.Errorf("api: startup probe %+v, want GET /healthz on port http", p.ProbeHandler))
	}
	if got := probeBudget(p); got < need {
		errs = append(errs, fmt.Errorf("api: the startup probe gives up after %s, want at least STARTUP_TIMEOUT %s + %s for the rest of start-up",
			got, startup, startMargin))
	}
	return errs
}

func checkK8sMemoryLimit(_ *testing.T, r rendered) []error {
	c := r.api()
	lim := c.Resources.Limits.Memory()
	if lim.IsZero() {
		return []error{fmt.Errorf("api: no memory limit to derive GOMEMLIMIT from")}
	}
	if !fromMemoryLimit(c, "GOMEMLIMIT", map[string]bool{}) {
		return []error{fmt.Errorf("api: GOMEMLIMIT is not set from the container's memory limit (a resourceFieldRef to limits.memory, or $(VAR) of one): it would not follow the limit")}
	}
	env, err := r.resolvedEnv(c)
	if err != nil {
		return []error{fmt.Errorf("api: %w", err)}
	}
	got, err := goMemLimit(env["GOMEMLIMIT"])
	if err != nil {
		return []error{fmt.Errorf("api: %w", err)}
	}
	if share := float64(got) / float64(lim.Value()); share < 0.85 || share >= 1 {
		return []error{fmt.Errorf("api: GOMEMLIMIT=%s is %d bytes, %.1f%% of the memory limit %s: want 85%% to 99%%, leaving the rest for what the runtime does not count",
			env["GOMEMLIMIT"], got, 100*share, lim)}
	}
	return nil
}

// fromMemoryLimit reports whether container c's variable name comes from its memory limit:
// a resourceFieldRef to it, or a value that refers to such a variable.
func fromMemoryLimit(c *corev1.Container, name string, seen map[string]bool) bool {
	if seen[name] {
		return false
	}
	seen[name] = true
	for _, e := range c.Env {
		if e.Name != name {
			continue
		}
		if f := e.ValueFrom; f != nil && f.ResourceFieldRef != nil {
			return f.ResourceFieldRef.Resource == "limits.memory" && (f.ResourceFieldRef.ContainerName == "" || f.ResourceFieldRef.ContainerName == c.Name)
		}
		for _, m := range dependentVar.FindAllStringSubmatch(e.Value, -1) {
			if fromMemoryLimit(c, m[1], seen) {
				return true
			}
		}
	}
	return false
}

// migrateConns is the most connections `api migrate` holds: goose's, which holds its session
// lock, and one the pool may keep from the ping. The init container runs before its pod's
// API, so a pod holds at most the larger of this and DB_MAX_CONNS.
const migrateConns = 2

func checkK8sConnections(t *testing.T, r rendered) []error {
	d := r.deployment()
	annotation := func(key string) (int, error) {
		n, err := strconv.Atoi(d.Annotations[key])
		if err != nil {
			return 0, fmt.Errorf("Deployment %s: annotation %s %q: want the number the connection budget needs", d.Name, key, d.Annotations[key])
		}
		return n, nil
	}
	maxConns, err1 := annotation("seckill/postgres-max-connections")
	headroom, err2 := annotation("seckill/postgres-headroom")
	if err := errors.Join(err1, err2); err != nil {
		return []error{err}
	}
	text, ok := r.env(r.api())["DB_MAX_CONNS"]
	if !ok {
		text = apiDefault(t, "DB_MAX_CONNS")
	}
	pool, err := strconv.Atoi(text)
	if err != nil {
		return []error{fmt.Errorf("DB_MAX_CONNS %q: %w", text, err)}
	}
	replicas := 1
	if d.Spec.Replicas != nil {
		replicas = int(*d.Spec.Replicas)
	}
	surgeValue := intstr.FromString("25%") // Kubernetes' default
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxSurge != nil {
		surgeValue = *ru.MaxSurge
	}
	surge, err := intstr.GetScaledValueFromIntOrPercent(&surgeValue, replicas, true)
	if err != nil {
		return []error{fmt.Errorf("maxSurge %s: %w", surgeValue.String(), err)}
	}
	// A rollout or a drain does not wait for the old pods to end before it starts new ones:
	// up to replicas old pods drain, their pools still open, beside replicas + maxSurge new.
	pods := 2*replicas + surge
	need := max(pool, migrateConns)*pods + headroom
	t.Logf("connection budget: max(DB_MAX_CONNS %d, migrate %d) x (2 x %d replicas + maxSurge %d) + headroom %d = %d, max_connections %d",
		pool, migrateConns, replicas, surge, headroom, need, maxConns)
	if need > maxConns {
		return []error{fmt.Errorf("%d x (2 x %d replicas + maxSurge %d) + headroom %d = %d connections, more than max_connections %d",
			max(pool, migrateConns), replicas, surge, headroom, need, maxConns)}
	}
	return nil
}
