// Makes the fixtures of internal/authn's tests with Node's crypto, a JOSE implementation
// independent of this project's: one key of each kind (Ed25519, P-256, RSA 2048) as a public
// JWK, a private JWK and a PKCS#8 PEM, and one token signed by each, valid until 2100.
// Run from this directory: node make-fixtures.js
'use strict';
const crypto = require('crypto');
const fs = require('fs');

const b64u = (b) => Buffer.from(b).toString('base64url');
const kinds = [
  { name: 'ed25519', alg: 'EdDSA', gen: () => crypto.generateKeyPairSync('ed25519'), hash: null, opts: {} },
  { name: 'p256', alg: 'ES256', gen: () => crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }), hash: 'sha256', opts: { dsaEncoding: 'ieee-p1363' } },
  { name: 'rsa', alg: 'RS256', gen: () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }), hash: 'sha256', opts: {} },
];
const keys = [];
for (const k of kinds) {
  const { publicKey, privateKey } = k.gen();
  const kid = 'node-' + k.name;
  const pub = { ...publicKey.export({ format: 'jwk' }), kid, alg: k.alg, use: 'sig' };
  keys.push(pub);
  fs.writeFileSync(k.name + '.private.jwk', JSON.stringify({ ...privateKey.export({ format: 'jwk' }), kid, alg: k.alg }) + '\n');
  fs.writeFileSync(k.name + '.pem', privateKey.export({ format: 'pem', type: 'pkcs8' }));
  const header = b64u(JSON.stringify({ alg: k.alg, typ: 'JWT', kid }));
  const payload = b64u(JSON.stringify({ sub: '4242', aud: 'seckill', iss: 'https://id.example', exp: 4102444800, nbf: 1700000000 }));
  const sig = crypto.sign(k.hash, Buffer.from(header + '.' + payload), { key: privateKey, ...k.opts });
  fs.writeFileSync(k.name + '.token', header + '.' + payload + '.' + b64u(sig) + '\n');
}
fs.writeFileSync('node.jwks.json', JSON.stringify({ keys }, null, 2) + '\n');
