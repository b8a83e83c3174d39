package deploycheck_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
)

// imagePinned reports whether ref names a fixed image: by digest, or by a tag other than latest.
func imagePinned(ref string) bool {
	if strings.Contains(ref, "@sha256:") {
		return true
	}
	name := ref[strings.LastIndex(ref, "/")+1:]
	i := strings.LastIndex(name, ":")
	return i >= 0 && name[i+1:] != "" && name[i+1:] != "latest"
}

func checkComposeImages(_ *testing.T, c composeFile) []error {
	var errs []error
	for _, s := range c.project.Services {
		if s.Build != nil { // built here: its base images are checked in the Dockerfile
			continue
		}
		if !imagePinned(s.Image) {
			errs = append(errs, fmt.Errorf("service %s: image %q is not pinned (want a tag other than latest, or a digest)", s.Name, s.Image))
		}
	}
	return errs
}

func checkComposeHealth(_ *testing.T, c composeFile) []error {
	var errs []error
	for _, s := range c.project.Services {
		if !oneShot(c.project, s.Name) {
			if h := s.HealthCheck; h == nil || h.Disable || len(h.Test) == 0 || h.Test[0] == "NONE" {
				errs = append(errs, fmt.Errorf("service %s: long-running, without a health check", s.Name))
			}
		}
		for dep, d := range s.DependsOn {
			want := types.ServiceConditionHealthy
			if oneShot(c.project, dep) {
				want = types.ServiceConditionCompletedSuccessfully
			}
			if d.Condition != want {
				errs = append(errs, fmt.Errorf("service %s: depends_on %s with condition %q, want %q", s.Name, dep, d.Condition, want))
			}
		}
	}
	return errs
}

// secretName matches the variables that hold a secret, or a URL that may carry one.
var secretName = regexp.MustCompile(`(?i)(PASSWORD|TOKEN|SECRET|_KEY$|DATABASE_URL|_ADDRS?$)`)

// withDefault matches an interpolation that has a default: ${X:-v} or ${X-v}.
var withDefault = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*):?-[^}]*\}`)

func checkComposeSecrets(_ *testing.T, c composeFile) []error {
	var errs []error
	// Secrets come from files, never from the environment or inline content.
	for name, s := range c.project.Secrets {
		if s.File == "" || s.Environment != "" || s.Content != "" {
			errs = append(errs, fmt.Errorf("secret %s: want a file, not the environment or inline content", name))
		}
	}
	// No secret value in a service's environment: its _FILE form names a mounted secret.
	for _, s := range c.project.Services {
		mounted := map[string]bool{}
		for _, sec := range s.Secrets {
			target := sec.Target
			if target == "" {
				target = sec.Source
			}
			if !strings.HasPrefix(target, "/") {
				target = "/run/secrets/" + target
			}
			mounted[target] = true
		}
		for k, v := range s.Environment {
			switch {
			case strings.HasSuffix(k, "_FILE"):
				if v == nil || !mounted[*v] {
					errs = append(errs, fmt.Errorf("service %s: %s does not name a secret the service mounts", s.Name, k))
				}
			case secretName.MatchString(k) && v != nil && strings.Contains(*v, "@"):
				errs = append(errs, fmt.Errorf("service %s: %s carries credentials in the environment; use %s_FILE and a secret", s.Name, k, k))
			case secretName.MatchString(k) && !strings.HasSuffix(k, "_ADDR") && !strings.HasSuffix(k, "_ADDRS"):
				errs = append(errs, fmt.Errorf("service %s: secret %s in the environment; use %s_FILE and a secret", s.Name, k, k))
			}
		}
	}
	// Before interpolation: no default for a secret's variable, nor anywhere under secrets.
	walk(c.raw, "", func(path, v string) {
		for _, m := range withDefault.FindAllStringSubmatch(v, -1) {
			if secretName.MatchString(m[1]) || strings.HasPrefix(path, "secrets.") || secretName.MatchString(path[strings.LastIndex(path, ".")+1:]) {
				errs = append(errs, fmt.Errorf("%s: %s gives a secret a default", path, m[0]))
			}
		}
	})
	return errs
}

// walk calls f with the dotted path and value of every string in the model.
func walk(v any, path string, f func(path, v string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			walk(e, strings.TrimPrefix(path+"."+k, "."), f)
		}
	case []any:
		for i, e := range v {
			walk(e, fmt.Sprintf("%s[%d]", path, i), f)
		}
	case string:
		f(path, v)
	}
}

func checkComposeGrace(t *testing.T, c composeFile) []error {
	api, ok := c.project.Services["api"]
	if !ok {
		return []error{fmt.Errorf("no api service")}
	}
	env := map[string]string{}
	for k, v := range api.Environment {
		if v != nil {
			env[k] = *v
		}
	}
	drain := apiDrain(t, env)
	if api.StopGracePeriod == nil {
		return []error{fmt.Errorf("service api: no stop_grace_period (Docker's 10 s), want more than the drain, %s", drain)}
	}
	if grace := time.Duration(*api.StopGracePeriod); grace <= drain {
		return []error{fmt.Errorf("service api: stop_grace_period %s, want more than SHUTDOWN_DELAY + SHUTDOWN_TIMEOUT + %s = %s", grace, closeMargin, drain)}
	}
	return nil
}

func checkComposeReplicas(_ *testing.T, c composeFile) []error {
	var errs []error
	api, ok := c.project.Services["api"]
	if !ok {
		return []error{fmt.Errorf("no api service")}
	}
	if n := api.GetScale(); n < 2 {
		errs = append(errs, fmt.Errorf("service api: %d replicas, want 2 or more", n))
	}
	for _, p := range api.Ports {
		if p.Published != "" {
			errs = append(errs, fmt.Errorf("service api: publishes host port %s; only the load balancer may", p.Published))
		}
	}
	lb, ok := c.project.Services["lb"]
	if !ok {
		return append(errs, fmt.Errorf("no lb service"))
	}
	if !strings.HasPrefix(lb.Image, "haproxy:") && !strings.HasPrefix(lb.Image, "nginx:") {
		errs = append(errs, fmt.Errorf("service lb: image %q is neither HAProxy nor nginx", lb.Image))
	}
	if d, ok := lb.DependsOn["api"]; !ok || d.Condition != types.ServiceConditionHealthy {
		errs = append(errs, fmt.Errorf("service lb: does not wait for api to be healthy"))
	}
	// 8080, the API; 8081, the admin frontend (the replicas' ADMIN_ADDR), for operators.
	if len(lb.Ports) == 0 || len(lb.Ports) > 2 || lb.Ports[0].HostIP != "127.0.0.1" || lb.Ports[0].Published != "8080" ||
		len(lb.Ports) == 2 && (lb.Ports[1].HostIP != "127.0.0.1" || lb.Ports[1].Published != "8081") {
		errs = append(errs, fmt.Errorf("service lb: ports %+v, want 127.0.0.1:8080 and 127.0.0.1:8081 only", lb.Ports))
	}
	return errs
}

func checkComposeLoopback(_ *testing.T, c composeFile) []error {
	var errs []error
	for _, s := range c.project.Services {
		for _, p := range s.Ports {
			if p.Published != "" && p.HostIP != "127.0.0.1" && p.HostIP != "::1" {
				errs = append(errs, fmt.Errorf("service %s: port %s published on %q, want loopback only", s.Name, p.Published, p.HostIP))
			}
		}
	}
	return errs
}

func checkComposeRedisAOF(_ *testing.T, c composeFile) []error {
	cmd := strings.Join(c.project.Services["redis"].Command, " ")
	if !strings.Contains(cmd, "--appendonly yes") || !strings.Contains(cmd, "--appendfsync always") {
		return []error{fmt.Errorf("service redis: command %q, want --appendonly yes --appendfsync always (the queue strategy's accepted purchases)", cmd)}
	}
	return nil
}

func checkComposeObservability(_ *testing.T, c composeFile) []error {
	want := map[string][]string{
		"lb":           {"deploy/haproxy/haproxy.cfg"},
		"prometheus":   {"deploy/prometheus/prometheus.yml", "deploy/prometheus/rules"},
		"alertmanager": {"deploy/alertmanager/alertmanager.yml"},
		"grafana":      {"deploy/grafana/provisioning", "deploy/grafana/dashboards"},
	}
	var errs []error
	for svc, sources := range want {
		for _, src := range sources {
			i := slices.IndexFunc(c.project.Services[svc].Volumes, func(v types.ServiceVolumeConfig) bool {
				return strings.HasSuffix(filepath.ToSlash(v.Source), "/"+src)
			})
			if i < 0 || !c.project.Services[svc].Volumes[i].ReadOnly {
				errs = append(errs, fmt.Errorf("service %s: does not mount %s read-only", svc, src))
			}
		}
	}
	return errs
}

// fromLine matches a Dockerfile's FROM image, and its stage name if any.
var fromLine = regexp.MustCompile(`(?im)^FROM\s+(?:--\S+\s+)*(\S+)`)

// checkDockerfile checks that every base image the Dockerfile builds from is pinned.
func checkDockerfile(text string) []error {
	var errs []error
	stages := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?im)^FROM\s+.*\s+AS\s+(\S+)`).FindAllStringSubmatch(text, -1) {
		stages[strings.ToLower(m[1])] = true
	}
	for _, m := range fromLine.FindAllStringSubmatch(text, -1) {
		if !stages[strings.ToLower(m[1])] && !imagePinned(m[1]) {
			errs = append(errs, fmt.Errorf("Dockerfile: FROM %s is not pinned", m[1]))
		}
	}
	return errs
}
