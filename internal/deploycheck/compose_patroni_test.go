package deploycheck_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// loadComposePair loads compose.yaml with the override file at override the way `docker
// compose -f compose.yaml -f <override>` does (see loadCompose).
func loadComposePair(t *testing.T, override string) (composeFile, error) {
	t.Helper()
	paths := []string{filepath.Join(repoRoot, "compose.yaml"), override}
	opts := func(interpolate bool) (*cli.ProjectOptions, error) {
		return cli.NewProjectOptions(paths, cli.WithWorkingDirectory(repoRoot),
			cli.WithEnv([]string{"SECRETS_DIR=/run/seckill-secrets"}), cli.WithDiscardEnvFile,
			cli.WithInterpolation(interpolate), cli.WithResolvedPaths(true), cli.WithNormalization(true),
			cli.WithConsistency(true))
	}
	o, err := opts(true)
	if err != nil {
		return composeFile{}, err
	}
	p, err := o.LoadProject(context.Background())
	if err != nil {
		return composeFile{}, err
	}
	if o, err = opts(false); err != nil {
		return composeFile{}, err
	}
	raw, err := o.LoadModel(context.Background())
	if err != nil {
		return composeFile{}, err
	}
	return composeFile{project: p, raw: raw}, nil
}

// patroniNodes are the Patroni services of deploy/patroni/compose.yaml.
var patroniNodes = []string{"patroni1", "patroni2"}

// checkComposePatroni asserts what the Patroni variant promises: the single PostgreSQL gone,
// two nodes built from deploy/patroni with the leader key in compose's etcd, each reached by
// the other at its own name, and the API and migrate waiting for both.
func checkComposePatroni(c composeFile) []error {
	var errs []error
	p := c.project
	if _, ok := p.Services["postgres"]; ok {
		errs = append(errs, fmt.Errorf("the single postgres service is still there"))
	}
	for _, name := range patroniNodes {
		s, ok := p.Services[name]
		if !ok {
			errs = append(errs, fmt.Errorf("no service %s", name))
			continue
		}
		if s.Build == nil || filepath.Base(s.Build.Context) != "patroni" {
			errs = append(errs, fmt.Errorf("%s: not built from deploy/patroni", name))
		}
		env := func(k string) string {
			if v := s.Environment[k]; v != nil {
				return *v
			}
			return ""
		}
		if h := env("PATRONI_ETCD3_HOSTS"); !strings.HasPrefix(h, "etcd:") {
			errs = append(errs, fmt.Errorf("%s: PATRONI_ETCD3_HOSTS %q, want compose's etcd", name, h))
		}
		for _, k := range []string{"PATRONI_POSTGRESQL_CONNECT_ADDRESS", "PATRONI_RESTAPI_CONNECT_ADDRESS"} {
			if !strings.HasPrefix(env(k), name+":") {
				errs = append(errs, fmt.Errorf("%s: %s %q, want the node's own name", name, k, env(k)))
			}
		}
		if env("PATRONI_NAME") != name {
			errs = append(errs, fmt.Errorf("%s: PATRONI_NAME %q", name, env("PATRONI_NAME")))
		}
		for _, dep := range []string{"api", "migrate"} {
			if d, ok := p.Services[dep].DependsOn[name]; !ok || d.Condition != types.ServiceConditionHealthy {
				errs = append(errs, fmt.Errorf("%s does not wait for %s to be healthy", dep, name))
			}
		}
	}
	return errs
}

// TestComposePatroni loads compose.yaml with deploy/patroni/compose.yaml as Docker Compose
// would, and holds the result to every check of compose.yaml (TestCompose) and to the
// variant's own; deploy/patroni/Dockerfile's base image must be pinned. Its control: the
// override without its reset of the single PostgreSQL must be rejected.
func TestComposePatroni(t *testing.T) {
	override := filepath.Join(repoRoot, "deploy", "patroni", "compose.yaml")
	c, err := loadComposePair(t, override)
	if err != nil {
		t.Fatalf("load compose.yaml with %s: %v", override, err)
	}
	for name, check := range composeChecks {
		for _, err := range check(t, c) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, err := range checkComposePatroni(c) {
		t.Errorf("patroni: %v", err)
	}
	df, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "patroni", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range checkDockerfile(string(df)) {
		t.Error(err)
	}

	text, err := os.ReadFile(override)
	if err != nil {
		t.Fatal(err)
	}
	mutated := strings.Replace(string(text), "  postgres: !reset null\n", "", 1)
	if mutated == string(text) {
		t.Fatal("control: the override has no reset of the postgres service to remove")
	}
	path := filepath.Join(t.TempDir(), "compose.yaml")
	if err := os.WriteFile(path, []byte(mutated), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = loadComposePair(t, path)
	if err != nil {
		t.Fatalf("control: %v", err)
	}
	errs := checkComposePatroni(c)
	if len(errs) == 0 {
		t.Fatal("control: the single postgres service kept, and the check found nothing wrong")
	}
	t.Logf("control: %v", errs[0])
}
