package deploycheck_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// ingressRoutes reports whether path p of an Ingress routes a request for path, as the
// Ingress API defines Exact and Prefix (by path element); ImplementationSpecific is read as
// Prefix, the loosest of the readings controllers give it.
func ingressRoutes(p networkingv1.HTTPIngressPath, path string) bool {
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		return p.Path == path
	}
	prefix := strings.TrimSuffix(p.Path, "/")
	return prefix == "" || path == prefix || strings.HasPrefix(path, prefix+"/")
}

// publicPorts are the container ports the Ingresses send path to, through the Services.
func (r rendered) publicPorts(path string) ([]int32, []error) {
	var ports []int32
	var errs []error
	to := func(ing string, b *networkingv1.IngressBackend) {
		if b == nil || b.Service == nil {
			return
		}
		s := r.service(b.Service.Name)
		if s == nil {
			errs = append(errs, fmt.Errorf("Ingress %s: Service %s is not in the render", ing, b.Service.Name))
			return
		}
		for _, sp := range s.Spec.Ports {
			if sp.Name == b.Service.Port.Name && sp.Name != "" || sp.Port == b.Service.Port.Number && sp.Port != 0 {
				if cp, ok := r.containerPort(sp.TargetPort); ok {
					ports = append(ports, cp)
				}
				return
			}
		}
		errs = append(errs, fmt.Errorf("Ingress %s: Service %s has no port %+v", ing, s.Name, b.Service.Port))
	}
	for _, ing := range r.ingresses {
		if ing.Spec.DefaultBackend != nil {
			to(ing.Name, ing.Spec.DefaultBackend)
		}
		for _, rule := range ing.Spec.Rules {
			if rule.HTTP == nil {
				continue
			}
			for _, p := range rule.HTTP.Paths {
				if ingressRoutes(p, path) {
					to(ing.Name, &p.Backend)
				}
			}
		}
	}
	return ports, errs
}

func ruleHTTPPaths(rule networkingv1.IngressRule) []networkingv1.HTTPIngressPath {
	if rule.HTTP == nil {
		return nil
	}
	return rule.HTTP.Paths
}

func (r rendered) service(name string) *corev1.Service {
	for _, s := range r.services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// checkK8sPublicPath: clients reach the API through the Ingress, which routes its routes and
// not /metrics, /healthz or /readyz; no Service puts the pods on a node's or a cloud's port.
// The admin routes share the public listener unless ADMIN_ADDR moves them and /metrics to a
// port of their own, which no Ingress then reaches: once cmd/api reads ADMIN_ADDR, it must be
// set.
func checkK8sPublicPath(t *testing.T, r rendered) []error {
	public, metrics, err := r.ports(t)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, s := range r.services {
		if s.Spec.Type != "" && s.Spec.Type != corev1.ServiceTypeClusterIP {
			errs = append(errs, fmt.Errorf("Service %s: type %s puts every route of the API, /metrics too, on the public path; want ClusterIP behind the Ingress", s.Name, s.Spec.Type))
		}
	}
	if metrics != public {
		for _, ing := range r.ingresses {
			for _, rule := range ing.Spec.Rules {
				for _, p := range ruleHTTPPaths(rule) {
					if ports, _ := r.publicPorts(p.Path); slices.Contains(ports, metrics) {
						errs = append(errs, fmt.Errorf("Ingress %s: %s reaches the metrics and admin port %d", ing.Name, p.Path, metrics))
					}
				}
			}
		}
	}
	routedTo := func(path string) []int32 {
		ports, perrs := r.publicPorts(path)
		errs = append(errs, perrs...)
		return ports
	}
	if ports := routedTo("/api/v1/products/1/purchase"); len(ports) == 0 || ports[0] != public {
		errs = append(errs, fmt.Errorf("the Ingress sends a purchase to ports %v, want the API's public port %d", ports, public))
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		for _, p := range routedTo(path) {
			if p == public || p == metrics {
				errs = append(errs, fmt.Errorf("the Ingress routes %s to port %d of the API, which serves it", path, p))
			}
		}
	}
	if metrics == public {
		why := "the admin routes (POST /api/v1/products, GET .../audit) are on the public path, behind ADMIN_TOKEN only"
		if apiVariables(t)["ADMIN_ADDR"] {
			errs = append(errs, fmt.Errorf("%s, and cmd/api reads ADMIN_ADDR: set it, declare its port and scrape that", why))
		} else {
			t.Logf("public path: %s: cmd/api has no second listener (no ADMIN_ADDR in api -h)", why)
		}
	}
	return errs
}

// TestKustomizeAdminListener renders the overlay with the PodMonitor and the admin listener
// components: /metrics and the admin routes on ADMIN_ADDR, a port no Ingress reaches and
// only Prometheus may. Every check must pass, but that a cmd/api without a second listener
// does not know ADMIN_ADDR. The control: the Ingress sent to that port through the Service.
func TestKustomizeAdminListener(t *testing.T) {
	files := withComponents(k8sFiles(t), podMonitorComponent, adminListenerComponent)
	control := map[string]string{}
	for k, v := range files {
		control[k] = v
	}
	control["base/service.yaml"] += "    - name: admin\n      port: 9091\n      targetPort: admin\n"
	control[overlay+"/ingress.yaml"] = strings.Replace(control[overlay+"/ingress.yaml"], "name: http", "name: admin", 1)
	if r, err := renderK8s(control); err != nil {
		t.Fatal(err)
	} else if errs := checkK8sPublicPath(t, r); !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), "reaches the metrics and admin port 9091") }) {
		t.Errorf("public path with the Ingress sent to the admin port: %v, want it to say so", errs)
	}
	r, err := renderK8s(files)
	if err != nil {
		t.Fatal(err)
	}
	public, metrics, err := r.ports(t)
	if err != nil || public != 8080 || metrics != 9091 {
		t.Fatalf("ports: public %d, metrics and admin %d, %v; want 8080 and 9091", public, metrics, err)
	}
	reads := apiVariables(t)["ADMIN_ADDR"]
	for name, check := range k8sChecks {
		for _, err := range check(t, r) {
			if name == "settings known" && !reads && strings.Contains(err.Error(), "ADMIN_ADDR is no variable") {
				t.Logf("%s: %v (cmd/api has no second listener yet)", name, err)
				continue
			}
			t.Errorf("%s: %v", name, err)
		}
	}
}
