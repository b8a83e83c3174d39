package api

import _ "embed" // for OpenAPI

// OpenAPI is the OpenAPI 3.1 description of the whole HTTP API, openapi.yaml in this
// package: every route, body, problem code and header. The server serves it at
// GET /api/v1/openapi.yaml, and the tests validate every request and answer against it
// (internal/testenv/contract). Treat it as read-only.
//
//go:embed openapi.yaml
var OpenAPI []byte

// OpenAPIPath is the route the server serves OpenAPI at.
const OpenAPIPath = "/api/v1/openapi.yaml"
