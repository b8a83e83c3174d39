package httpapi

// Exported for the tests in package httpapi_test.
var StrictDecode = strictDecode
