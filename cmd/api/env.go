package main

import (
	"fmt"
	"slices"
)

// devDefaults are the settings whose default is a development server on this machine (the
// ones `make up` starts). Set but empty, each is an error: a deployment whose templating left
// it empty must not serve from the development database.
var devDefaults = []string{"DATABASE_URL", "REDIS_ADDR", "ETCD_ENDPOINTS"}

// setButEmpty returns an error naming each of devDefaults that is set but empty, and each
// secret's _FILE form that is set but empty (a file that is empty is envflag.Files' error).
func setButEmpty(lookupEnv func(string) (string, bool)) []error {
	var errs []error
	for _, key := range devDefaults {
		if v, set := lookupEnv(key); set && v == "" {
			if _, file := lookupEnv(key + "_FILE"); file && slices.Contains(secrets, key) {
				continue // KEY_FILE gives it, or is itself reported
			}
			errs = append(errs, fmt.Errorf("%s is set but empty: unset it for the development default, or give its value", key))
		}
	}
	for _, key := range secrets {
		if v, set := lookupEnv(key + "_FILE"); set && v == "" {
			errs = append(errs, fmt.Errorf("%s_FILE is set but empty: name the file that holds %s, or unset it", key, key))
		}
	}
	return errs
}
