package httpapi

// Exported for the tests in package httpapi_test.
var StrictDecode = strictDecode

// The middlewares, for BenchmarkMiddleware.
var (
	WithRequestID = withRequestID
	Observe       = observe
)
