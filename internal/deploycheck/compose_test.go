package deploycheck_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"
)

// composeFile is a compose file as Docker Compose reads it (interpolated, validated against the
// Compose schema, paths resolved), with its model before interpolation beside it.
type composeFile struct {
	project *types.Project
	raw     map[string]any // the model before ${...} interpolation
}

// loadCompose loads the compose file at path the way `docker compose` does, with the
// variables the deployment docs tell an operator to set.
func loadCompose(t *testing.T, path string) (composeFile, error) {
	t.Helper()
	env := []string{"SECRETS_DIR=/run/seckill-secrets"}
	opts := func(interpolate bool) (*cli.ProjectOptions, error) {
		return cli.NewProjectOptions([]string{path},
			cli.WithWorkingDirectory(filepath.Dir(path)), cli.WithEnv(env), cli.WithDiscardEnvFile,
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
	o, err = opts(false)
	if err != nil {
		return composeFile{}, err
	}
	raw, err := o.LoadModel(context.Background())
	if err != nil {
		return composeFile{}, err
	}
	return composeFile{project: p, raw: raw}, nil
}

// A compose check returns what is wrong, nothing when all holds.
type composeCheck func(t *testing.T, c composeFile) []error

var composeChecks = map[string]composeCheck{
	"images pinned":         checkComposeImages,
	"health checks":         checkComposeHealth,
	"no secret default":     checkComposeSecrets,
	"grace above drain":     checkComposeGrace,
	"replicas behind lb":    checkComposeReplicas,
	"loopback ports":        checkComposeLoopback,
	"redis appendfsync":     checkComposeRedisAOF,
	"observability mounted": checkComposeObservability,
	"buyer identity on":     checkComposeBuyerIdentity,
}

// oneShot reports whether service name runs to completion: another service waits for it with
// service_completed_successfully. Every other service is long-running.
func oneShot(p *types.Project, name string) bool {
	for _, s := range p.Services {
		if d, ok := s.DependsOn[name]; ok && d.Condition == types.ServiceConditionCompletedSuccessfully {
			return true
		}
	}
	return false
}

func TestCompose(t *testing.T) {
	c, err := loadCompose(t, filepath.Join(repoRoot, "compose.yaml"))
	if err != nil {
		t.Fatalf("load compose.yaml: %v", err)
	}
	for name, check := range composeChecks {
		for _, err := range check(t, c) {
			t.Errorf("%s: %v", name, err)
		}
	}
	df, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range checkDockerfile(string(df)) {
		t.Error(err)
	}
}

// mutateCompose writes a copy of compose.yaml changed by f into a temporary directory beside
// the deploy files it names, and loads it.
func mutateCompose(t *testing.T, f func(m map[string]any)) (composeFile, error) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repoRoot, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(text, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "compose.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return loadCompose(t, path)
}
