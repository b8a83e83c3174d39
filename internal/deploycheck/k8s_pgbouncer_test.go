package deploycheck_test

import (
	"strings"
	"testing"
)

// pgBouncerComponent points the init container's migrations at PostgreSQL itself and lets the
// pods reach PgBouncer.
const pgBouncerComponent = "components/pgbouncer"

// withPgBouncer returns files with the overlay rendering the PgBouncer component, its Secret's
// URLs naming PgBouncer and PostgreSQL, and the migrations' URL in its secretGenerator unless
// withoutKey.
func withPgBouncer(files map[string]string, withoutKey bool) map[string]string {
	files = withComponents(files, pgBouncerComponent)
	files[overlay+"/secrets/database-url"] = "postgres://seckill:pw@pgbouncer.seckill-data.svc:6432/seckill?sslmode=require&default_query_exec_mode=cache_describe\n"
	files[overlay+"/secrets/migrate-database-url"] = "postgres://seckill:pw@postgres.seckill-data.svc:5432/seckill?sslmode=require\n"
	if !withoutKey {
		k := overlay + "/kustomization.yaml"
		files[k] = strings.Replace(files[k], "      - redis-password=secrets/redis-password\n",
			"      - redis-password=secrets/redis-password\n      - migrate-database-url=secrets/migrate-database-url\n", 1)
	}
	return files
}

// TestKustomizePgBouncer renders the overlay with the PgBouncer component: every check passes,
// the init container reads the migrations' URL and the API PgBouncer's, and the NetworkPolicy
// lets the pods reach both ports. Without the migrations' URL in the Secret, the secrets
// check fails; without the component, the NetworkPolicy does not let the API reach PgBouncer.
func TestKustomizePgBouncer(t *testing.T) {
	r, err := renderK8s(withPgBouncer(k8sFiles(t), false))
	if err != nil {
		t.Fatal(err)
	}
	for name, check := range k8sChecks {
		for _, err := range check(t, r) {
			t.Errorf("%s: %v", name, err)
		}
	}
	init := r.deployment().Spec.Template.Spec.InitContainers[0]
	if got, want := r.databasePort(&init), int32(5432); got != want {
		t.Errorf("the migrations' port %d, want PostgreSQL's %d", got, want)
	}
	if got, want := r.databasePort(r.api()), int32(6432); got != want {
		t.Errorf("the API's PostgreSQL port %d, want PgBouncer's %d", got, want)
	}

	r, err = renderK8s(withPgBouncer(k8sFiles(t), true))
	if err != nil {
		t.Fatal(err)
	}
	if errs := checkK8sSecrets(t, r); len(errs) == 0 || !strings.Contains(errs[0].Error(), "migrate-database-url") {
		t.Errorf("secrets check without the migrations' URL in the Secret: %v, want an error naming migrate-database-url", errs)
	}

	files := withPgBouncer(k8sFiles(t), false)
	k := overlay + "/kustomization.yaml"
	files[k] = strings.Replace(files[k], "  - ../../"+pgBouncerComponent+"\n", "", 1)
	if r, err = renderK8s(files); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, err := range checkK8sNetworkPolicy(t, r) {
		msgs = append(msgs, err.Error())
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "no egress to TCP 6432") {
		t.Errorf("network policy check with PgBouncer's URL but not the component: %q, want no egress to TCP 6432", msgs)
	}
}
