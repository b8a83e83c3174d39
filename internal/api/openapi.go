package api

import _ "embed" // for OpenAPI

// OpenAPI is openapi.yaml, the API's OpenAPI 3.1 contract. Read-only.
//
//go:embed openapi.yaml
var OpenAPI []byte

// OpenAPIPath is the route the server serves OpenAPI at.
const OpenAPIPath = "/api/v1/openapi.yaml"
