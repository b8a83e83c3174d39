package dlock

// Exported for the tests in package dlock_test.
var (
	Derive   = derive
	CheckKey = checkKey
)
