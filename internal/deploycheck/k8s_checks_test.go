package deploycheck_test

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// A Kubernetes check returns what is wrong with the rendered objects, nothing when all holds.
type k8sCheck func(t *testing.T, r rendered) []error

var k8sChecks = map[string]k8sCheck{
	"images pinned":          checkK8sImages,
	"replicas and probes":    checkK8sProbes,
	"shutdown":               checkK8sShutdown,
	"resources and security": checkK8sSecurity,
	"secrets from files":     checkK8sSecrets,
	"migrations":             checkK8sMigrations,
	"service and budget":     checkK8sServiceBudget,
	"settings known":         checkK8sSettingsKnown,
	"spread":                 checkK8sSpread,
	"startup":                checkK8sStartup,
	"memory limit":           checkK8sMemoryLimit,
	"connection budget":      checkK8sConnections,
	"scrape":                 checkK8sScrape,
	"network policy":         checkK8sNetworkPolicy,
	"public path":            checkK8sPublicPath,
	"buyer identity":         checkK8sBuyerIdentity,
}

func (r rendered) deployment() *appsv1.Deployment { return r.deployments[0] }

// api is the API's container.
func (r rendered) api() *corev1.Container {
	cs := r.deployment().Spec.Template.Spec.Containers
	for i := range cs {
		if cs[i].Name == "api" {
			return &cs[i]
		}
	}
	return &corev1.Container{Name: "api (missing)"}
}

func (r rendered) allContainers() []corev1.Container {
	spec := r.deployment().Spec.Template.Spec
	return append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
}

// env is the environment container c starts with: its ConfigMaps' data, then its own values.
func (r rendered) env(c *corev1.Container) map[string]string {
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		for _, cm := range r.configMaps {
			if from.ConfigMapRef != nil && cm.Name == from.ConfigMapRef.Name {
				for k, v := range cm.Data {
					env[k] = v
				}
			}
		}
	}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

func checkK8sImages(_ *testing.T, r rendered) []error {
	var errs []error
	for _, c := range r.allContainers() {
		if !imagePinned(c.Image) {
			errs = append(errs, fmt.Errorf("container %s: image %q is not pinned", c.Name, c.Image))
		}
	}
	return errs
}

func checkK8sProbes(_ *testing.T, r rendered) []error {
	var errs []error
	if n := r.deployment().Spec.Replicas; n == nil || *n < 2 {
		got := 1
		if n != nil {
			got = int(*n)
		}
		errs = append(errs, fmt.Errorf("%d replicas, want 2 or more", got))
	}
	c := r.api()
	probe := func(kind string, p *corev1.Probe, want string) {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != want || p.HTTPGet.Port.String() != "http" {
			errs = append(errs, fmt.Errorf("api: %s probe %+v, want GET %s on port http", kind, p, want))
		}
	}
	probe("readiness", c.ReadinessProbe, "/readyz")
	probe("liveness", c.LivenessProbe, "/healthz")
	return errs
}

func checkK8sShutdown(t *testing.T, r rendered) []error {
	var errs []error
	c := r.api()
	env := r.env(c)
	var preStop time.Duration
	if l := c.Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Sleep == nil || l.PreStop.Sleep.Seconds <= 0 {
		errs = append(errs, fmt.Errorf("api: no preStop sleep: the replica would stop serving before the endpoints' removal reaches kube-proxy"))
	} else {
		preStop = time.Duration(l.PreStop.Sleep.Seconds) * time.Second
	}
	// A load balancer that follows the readiness probe takes the replica out after
	// periodSeconds x failureThreshold; /readyz answers 503 for SHUTDOWN_DELAY: that must cover it.
	delay, _ := time.ParseDuration(env["SHUTDOWN_DELAY"])
	if p := c.ReadinessProbe; p != nil {
		detect := time.Duration(p.PeriodSeconds*p.FailureThreshold) * time.Second
		if delay < detect {
			errs = append(errs, fmt.Errorf("api: SHUTDOWN_DELAY %s is shorter than the readiness probe takes to see the 503 (%s)", delay, detect))
		}
	}
	grace := 30 * time.Second // Kubernetes' default
	if g := r.deployment().Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	if drain := apiDrain(t, env); grace <= preStop+drain {
		errs = append(errs, fmt.Errorf("terminationGracePeriodSeconds %s, want more than the preStop sleep %s + SHUTDOWN_DELAY + SHUTDOWN_TIMEOUT + %s = %s",
			grace, preStop, closeMargin, preStop+drain))
	}
	return errs
}

func checkK8sSecurity(_ *testing.T, r rendered) []error {
	var errs []error
	pod := r.deployment().Spec.Template.Spec.SecurityContext
	for _, c := range r.allContainers() {
		req, lim := c.Resources.Requests, c.Resources.Limits
		if req.Cpu().IsZero() || req.Memory().IsZero() {
			errs = append(errs, fmt.Errorf("%s: no cpu or memory request", c.Name))
		}
		if lim.Memory().IsZero() {
			errs = append(errs, fmt.Errorf("%s: no memory limit", c.Name))
		}
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		nonRoot, user := sc.RunAsNonRoot, sc.RunAsUser
		if pod != nil && nonRoot == nil {
			nonRoot = pod.RunAsNonRoot
		}
		if pod != nil && user == nil {
			user = pod.RunAsUser
		}
		if nonRoot == nil || !*nonRoot || user == nil || *user == 0 {
			errs = append(errs, fmt.Errorf("%s: runs as root, or may (want runAsNonRoot and a runAsUser other than 0)", c.Name))
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			errs = append(errs, fmt.Errorf("%s: no read-only root filesystem", c.Name))
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			errs = append(errs, fmt.Errorf("%s: allows privilege escalation", c.Name))
		}
		if sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			errs = append(errs, fmt.Errorf("%s: does not drop every capability", c.Name))
		}
	}
	return errs
}

func checkK8sSecrets(_ *testing.T, r rendered) []error {
	var errs []error
	for _, cm := range r.configMaps {
		for k, v := range cm.Data {
			if secretName.MatchString(k) && !strings.HasSuffix(k, "_FILE") && (strings.Contains(v, "@") || !strings.HasSuffix(k, "_ADDR") && !strings.HasSuffix(k, "_ADDRS")) {
				errs = append(errs, fmt.Errorf("ConfigMap %s: %s is a secret; put it in the Secret and name it with %s_FILE", cm.Name, k, k))
			}
		}
	}
	spec := r.deployment().Spec.Template.Spec
	secretOf := map[string]*corev1.Secret{} // volume name to the rendered Secret it mounts
	for _, v := range spec.Volumes {
		if v.Secret == nil {
			continue
		}
		secretOf[v.Name] = nil
		for _, s := range r.secrets {
			if s.Name == v.Secret.SecretName {
				secretOf[v.Name] = s
			}
		}
		if secretOf[v.Name] == nil {
			errs = append(errs, fmt.Errorf("volume %s: Secret %s is not in the render", v.Name, v.Secret.SecretName))
		}
	}
	for _, c := range r.allContainers() {
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
				errs = append(errs, fmt.Errorf("%s: %s from a Secret into the environment; mount it and use %s_FILE", c.Name, e.Name, e.Name))
			case strings.HasSuffix(e.Name, "_FILE"):
				if err := secretFile(c, secretOf, e.Value); err != nil {
					errs = append(errs, fmt.Errorf("%s: %s=%s: %w", c.Name, e.Name, e.Value, err))
				}
			case secretName.MatchString(e.Name):
				errs = append(errs, fmt.Errorf("%s: %s in the environment; mount it and use %s_FILE", c.Name, e.Name, e.Name))
			}
		}
	}
	return errs
}

// secretFile reports why file is not a key of a Secret that container c mounts.
func secretFile(c corev1.Container, secretOf map[string]*corev1.Secret, file string) error {
	for _, m := range c.VolumeMounts {
		s, ok := secretOf[m.Name]
		if !ok || path.Dir(file) != path.Clean(m.MountPath) {
			continue
		}
		if s == nil {
			return fmt.Errorf("its Secret is not in the render")
		}
		if _, ok := s.Data[path.Base(file)]; !ok {
			return fmt.Errorf("no key %s in Secret %s", path.Base(file), s.Name)
		}
		return nil
	}
	return fmt.Errorf("not a file of a mounted Secret")
}

func checkK8sMigrations(_ *testing.T, r rendered) []error {
	var errs []error
	found := false
	for _, c := range r.deployment().Spec.Template.Spec.InitContainers {
		found = found || len(c.Args) > 0 && c.Args[0] == "migrate"
	}
	if !found {
		errs = append(errs, fmt.Errorf("no init container runs api migrate"))
	}
	if v := r.env(r.api())["MIGRATE_ON_START"]; v == "" || v != "false" && v != "0" {
		errs = append(errs, fmt.Errorf("api: MIGRATE_ON_START=%q: the replicas migrate too (want false: the init container does)", v))
	}
	return errs
}

// selects reports whether every label of selector is on labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

func checkK8sServiceBudget(_ *testing.T, r rendered) []error {
	var errs []error
	d := r.deployment()
	labels := d.Spec.Template.Labels
	ports := map[string]bool{}
	for _, p := range r.api().Ports {
		ports[p.Name], ports[strconv.Itoa(int(p.ContainerPort))] = true, true
	}
	for _, s := range r.services {
		if !selects(s.Spec.Selector, labels) {
			errs = append(errs, fmt.Errorf("Service %s: selector %v does not select the API's pods %v", s.Name, s.Spec.Selector, labels))
		}
		for _, p := range s.Spec.Ports {
			if !ports[p.TargetPort.String()] {
				errs = append(errs, fmt.Errorf("Service %s: targetPort %s names no port of the API", s.Name, p.TargetPort.String()))
			}
		}
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	for _, b := range r.pdbs {
		if b.Spec.Selector == nil || !selects(b.Spec.Selector.MatchLabels, labels) {
			errs = append(errs, fmt.Errorf("PodDisruptionBudget %s: does not select the API's pods", b.Name))
		}
		switch {
		case b.Spec.MaxUnavailable != nil:
			if n := b.Spec.MaxUnavailable.IntValue(); n < 1 || int32(n) >= replicas {
				errs = append(errs, fmt.Errorf("PodDisruptionBudget %s: maxUnavailable %s, want from 1 to %d of %d replicas", b.Name, b.Spec.MaxUnavailable, replicas-1, replicas))
			}
		case b.Spec.MinAvailable != nil:
			if n := b.Spec.MinAvailable.IntValue(); n < 1 || int32(n) >= replicas {
				errs = append(errs, fmt.Errorf("PodDisruptionBudget %s: minAvailable %s, want from 1 to %d of %d replicas", b.Name, b.Spec.MinAvailable, replicas-1, replicas))
			}
		default:
			errs = append(errs, fmt.Errorf("PodDisruptionBudget %s: neither maxUnavailable nor minAvailable", b.Name))
		}
	}
	return errs
}
