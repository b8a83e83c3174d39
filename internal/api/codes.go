package api

import "net/http"

// The problem codes: Problem.Code, stable and machine-readable. Each is answered with one
// status (see Status); the README's error table says the same in more words.
const (
	// CodeInvalidRequest (400): malformed JSON, not exactly one object, an unknown,
	// repeated or case-variant key, a missing or invalid field, or a path id or user id
	// that is not a positive 64-bit integer.
	CodeInvalidRequest = "invalid_request"
	// CodeUnauthorized (401): an admin route without the right bearer token; with buyer
	// identity on, a buyer route (purchase, bundle, order lookup, pay, cancel) without a
	// bearer token, or with one that is forged, expired, not yet valid, or for another
	// audience or issuer. WWW-Authenticate says which (RFC 6750).
	CodeUnauthorized = "unauthorized"
	// CodeAdminDisabled (403): an admin route while the server has no admin token.
	CodeAdminDisabled = "admin_disabled"
	// CodeUserMismatch (403): with buyer identity on, a purchase or bundle whose body's
	// user_id is not the bearer token's user. Nothing was written.
	CodeUserMismatch = "user_mismatch"
	// CodeNotFound (404): no such route.
	CodeNotFound = "not_found"
	// CodeProductNotFound (404): no product with the id in the path.
	CodeProductNotFound = "product_not_found"
	// CodeOrderNotFound (404): the order lookup, a payment or a cancel found no order of this
	// user for this product; with buyer identity on, also for another user than the bearer
	// token's, whether that user has an order or not.
	CodeOrderNotFound = "order_not_found"
	// CodeMethodNotAllowed (405): a method the route does not serve.
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeSoldOut (409): the product has no stock left.
	CodeSoldOut = "sold_out"
	// CodeAlreadyPurchased (409): the user already has an order of this product (one per
	// user); Problem.OrderID names it.
	CodeAlreadyPurchased = "already_purchased"
	// CodeOrderExpired (409): a payment (or cancel) of a reservation past its pay_by: it
	// expired, and its unit went back to stock or is going back; Problem.OrderID names it.
	CodeOrderExpired = "order_expired"
	// CodeOrderCancelled (409): a payment of a cancelled reservation; Problem.OrderID names it.
	CodeOrderCancelled = "order_cancelled"
	// CodeOrderPaid (409): a cancel of a paid order (or of one final from the start, a product
	// without a payment window); Problem.OrderID names it.
	CodeOrderPaid = "order_paid"
	// CodeRequestTooLarge (413): a request body over 4 KiB.
	CodeRequestTooLarge = "request_too_large"
	// CodeRateLimited (429): too many purchase attempts by this user for this product, or
	// from this address; Retry-After says when to try again. Nothing was written.
	CodeRateLimited = "rate_limited"
	// CodeClientClosedRequest (499): the client went away before its answer, so nobody
	// reads it; it shows in logs and metrics.
	CodeClientClosedRequest = "client_closed_request"
	// CodeInternal (500): a bug; the details go to the server's log only.
	CodeInternal = "internal"
	// CodeBusy (503): the product's lock could not be had in time, or was lost, or the
	// purchase ran out of time, or another purchase of this user is in flight. Nothing was
	// written; retry after Retry-After.
	CodeBusy = "busy"
	// CodeUnavailable (503): PostgreSQL, Redis or etcd cannot serve for now. Nothing was written;
	// retry after Retry-After.
	CodeUnavailable = "unavailable"
	// CodeOutcomeUnknown (503): the purchase's COMMIT (or queueing script) got no answer, so
	// the order may exist (or be queued). Retrying the purchase, or the order lookup, tells.
	CodeOutcomeUnknown = "outcome_unknown"
)

// StatusClientClosedRequest is the status of CodeClientClosedRequest, nginx's 499, which
// net/http does not name.
const StatusClientClosedRequest = 499

// statuses maps each code to the status it is answered with.
var statuses = map[string]int{
	CodeInvalidRequest:      http.StatusBadRequest,
	CodeUnauthorized:        http.StatusUnauthorized,
	CodeAdminDisabled:       http.StatusForbidden,
	CodeUserMismatch:        http.StatusForbidden,
	CodeNotFound:            http.StatusNotFound,
	CodeProductNotFound:     http.StatusNotFound,
	CodeOrderNotFound:       http.StatusNotFound,
	CodeMethodNotAllowed:    http.StatusMethodNotAllowed,
	CodeSoldOut:             http.StatusConflict,
	CodeAlreadyPurchased:    http.StatusConflict,
	CodeOrderExpired:        http.StatusConflict,
	CodeOrderCancelled:      http.StatusConflict,
	CodeOrderPaid:           http.StatusConflict,
	CodeRequestTooLarge:     http.StatusRequestEntityTooLarge,
	CodeRateLimited:         http.StatusTooManyRequests,
	CodeClientClosedRequest: StatusClientClosedRequest,
	CodeInternal:            http.StatusInternalServerError,
	CodeBusy:                http.StatusServiceUnavailable,
	CodeUnavailable:         http.StatusServiceUnavailable,
	CodeOutcomeUnknown:      http.StatusServiceUnavailable,
}

// Status is the HTTP status the API answers code with, 0 for a code it never answers.
func Status(code string) int { return statuses[code] }

// LoadBalancerStatuses are the statuses the project's load balancer (deploy/haproxy/haproxy.cfg)
// answers code with besides Status(code): its 502 and 504 are outcome_unknown, the request
// reached an API process and its answer was lost or late. The API itself never answers them.
func LoadBalancerStatuses(code string) []int {
	if code == CodeOutcomeUnknown {
		return []int{http.StatusBadGateway, http.StatusGatewayTimeout}
	}
	return nil
}
