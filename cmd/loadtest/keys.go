package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seckill/seckill/internal/authn"
)

const keysHelp = `Make a key pair for buyer tokens: DIR/buyer-signing-key.pem, the private key (PKCS#8, mode
0600), which -sign-key reads, and DIR/buyer-jwks.json, a JWK Set of its public key (kid: its
RFC 7638 thumbprint), which the API reads (AUTH_JWKS_FILE). With -add, the new public key is
added to the JWKS there instead of replacing it (a rotation: docs/api.md#buyer-identity). An
existing private key is refused unless -force.`

// cmdKeys writes a signing key and its JWKS.
func cmdKeys(_ context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("keys", "[flags]", keysHelp, stderr)
	dir := fs.String("dir", "secrets", "directory to write the two files in")
	alg := fs.String("alg", authn.AlgEdDSA, "EdDSA (Ed25519), ES256 (P-256) or RS256 (RSA 2048)")
	add := fs.Bool("add", false, "add the public key to the JWKS in DIR, keeping its keys")
	force := fs.Bool("force", false, "replace an existing private key")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	privFile, jwksFile := filepath.Join(*dir, "buyer-signing-key.pem"), filepath.Join(*dir, "buyer-jwks.json")
	if _, err := os.Stat(privFile); err == nil && !*force {
		return fmt.Errorf("keys: %s exists: -force replaces it", privFile)
	}
	priv, pub, err := authn.GenerateKey(*alg)
	if err != nil {
		return err
	}
	keys := []json.RawMessage{pub}
	if *add {
		old, err := os.ReadFile(jwksFile)
		if err != nil {
			return fmt.Errorf("keys -add: %w", err)
		}
		var set struct{ Keys []json.RawMessage }
		if err := json.Unmarshal(old, &set); err != nil {
			return fmt.Errorf("keys -add: %s: %w", jwksFile, err)
		}
		keys = append(set.Keys, pub)
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return err
	}
	// The JWKS is public, and read by containers that run as other users: 0644. It is
	// written in place, not renamed over: Compose bind-mounts a secret's file, and a rename
	// would leave the containers the old one. A reader that catches it half written keeps its
	// keys and reads it again at its next reload.
	if err := errors.Join(writeFile(privFile, priv, 0o600), os.WriteFile(jwksFile, authn.JWKS(keys...), 0o644), os.Chmod(jwksFile, 0o644)); err != nil {
		return err
	}
	var k struct{ Kid string }
	_ = json.Unmarshal(pub, &k)
	fmt.Fprintf(stdout, "wrote %s (private) and %s (%d keys); kid %s\n", privFile, jwksFile, len(keys), k.Kid)
	return nil
}

// writeFile writes data to name through a temporary file renamed over it, so that a reader
// (the API rereading its JWKS) never sees half a file, with mode perm.
func writeFile(name string, data []byte, perm os.FileMode) error {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
