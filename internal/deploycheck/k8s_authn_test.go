package deploycheck_test

import (
	"fmt"
	"path"
	"testing"
)

// checkK8sBuyerIdentity: the shipped Deployment has buyer identity on (docs/api.md): the API's
// AUTH_JWKS_FILE is a file of a mounted Secret (the secrets check proves the key is there),
// mounted as a directory, not by subPath (a subPath mount never sees the file replaced, so a
// rotated key would wait for a restart), and AUTH_AUDIENCE and AUTH_ISSUER are set.
func checkK8sBuyerIdentity(_ *testing.T, r rendered) []error {
	c := r.api()
	env := r.env(c)
	var errs []error
	file := env["AUTH_JWKS_FILE"]
	if file == "" {
		errs = append(errs, fmt.Errorf("api: AUTH_JWKS_FILE is not set: buyer identity is off"))
	}
	for _, k := range []string{"AUTH_AUDIENCE", "AUTH_ISSUER"} {
		if env[k] == "" {
			errs = append(errs, fmt.Errorf("api: %s is empty: the API refuses to start with AUTH_JWKS_FILE alone", k))
		}
	}
	for _, m := range c.VolumeMounts {
		switch {
		case file == "":
		case m.SubPath != "" && path.Clean(m.MountPath) == path.Clean(file):
			errs = append(errs, fmt.Errorf("api: %s is mounted by subPath: a rotated key never reaches it", file))
		}
	}
	return errs
}
