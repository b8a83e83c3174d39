package labrun

// OwnerOf is ownerOf, for the tests.
var OwnerOf = ownerOf
