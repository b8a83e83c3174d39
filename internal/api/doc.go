// Package api is the contract of seckill's HTTP API: the problem codes it answers with, the
// RFC 9457 problem body, and the wire type of every JSON body it reads or writes. The server
// (internal/httpapi) encodes and decodes exactly these types, and the typed client
// (internal/api/client) and every tool or test that speaks to the API use them, so the JSON
// shape of the API has one definition. OpenAPI is the same contract in OpenAPI 3.1
// (openapi.yaml), for other languages and tools; the tests hold the server to it.
//
// The package imports only the standard library; it knows nothing of the domain packages,
// which map their values to these types at the HTTP edge. Its values are plain data, safe
// for concurrent use as long as nobody writes to them.
package api
