package deploycheck_test

import (
	"fmt"
	"strings"
	"testing"
)

// checkComposeBuyerIdentity: the shipped deployment has buyer identity on (docs/api.md): the
// api service's AUTH_JWKS_FILE names a file under /run/secrets (a secret it mounts: the
// secrets check proves that), and AUTH_AUDIENCE and AUTH_ISSUER are set.
func checkComposeBuyerIdentity(_ *testing.T, c composeFile) []error {
	api, ok := c.project.Services["api"]
	if !ok {
		return []error{fmt.Errorf("no api service")}
	}
	var errs []error
	if v := api.Environment["AUTH_JWKS_FILE"]; v == nil || !strings.HasPrefix(*v, "/run/secrets/") {
		errs = append(errs, fmt.Errorf("api: AUTH_JWKS_FILE is not set to a mounted secret: buyer identity is off"))
	}
	for _, k := range []string{"AUTH_AUDIENCE", "AUTH_ISSUER"} {
		if v := api.Environment[k]; v == nil || *v == "" {
			errs = append(errs, fmt.Errorf("api: %s is empty: the API refuses to start with AUTH_JWKS_FILE alone", k))
		}
	}
	return errs
}
