// Writes node.thumbprints.json: the RFC 7638 thumbprint (SHA-256, base64url) of each key of
// node.jwks.json, computed by Node from the members the RFC names, in its order, for
// internal/authn's tests of Thumbprint. Run from this directory: node thumbprints.js
'use strict';
const crypto = require('crypto');
const fs = require('fs');

const members = {
  OKP: (k) => ({ crv: k.crv, kty: k.kty, x: k.x }),
  EC: (k) => ({ crv: k.crv, kty: k.kty, x: k.x, y: k.y }),
  RSA: (k) => ({ e: k.e, kty: k.kty, n: k.n }),
};
const out = {};
for (const k of JSON.parse(fs.readFileSync('node.jwks.json')).keys) {
  out[k.kid] = crypto.createHash('sha256').update(JSON.stringify(members[k.kty](k))).digest('base64url');
}
fs.writeFileSync('node.thumbprints.json', JSON.stringify(out, null, 2) + '\n');
