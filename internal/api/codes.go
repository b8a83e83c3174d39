package api

import "net/http"

// The problem codes, each answered with one status (see Status and the README's error table).
const (
	// CodeInvalidRequest (400): a malformed body, field, path id or user id.
	CodeInvalidRequest = "invalid_request"
	// CodeUnauthorized (401): a missing or invalid bearer token; WWW-Authenticate says why.
	CodeUnauthorized = "unauthorized"
	// CodeAdminDisabled (403): an admin route while the server has no admin token.
	CodeAdminDisabled = "admin_disabled"
	// CodeUserMismatch (403): the body's user_id is not the token's user. Nothing was written.
	CodeUserMismatch = "user_mismatch"
	// CodeNotFound (404): no such route.
	CodeNotFound = "not_found"
	// CodeProductNotFound (404): no product with the id in the path.
	CodeProductNotFound = "product_not_found"
	// CodeOrderNotFound (404): no order of this user for this product, or another user's.
	CodeOrderNotFound = "order_not_found"
	// CodeMethodNotAllowed (405): a method the route does not serve.
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeSoldOut (409): the product has no stock left.
	CodeSoldOut = "sold_out"
	// CodeAlreadyPurchased (409): the user has an order of it; Problem.OrderID names it.
	CodeAlreadyPurchased = "already_purchased"
	// CodeOrderExpired (409): the reservation expired; Problem.OrderID names it.
	CodeOrderExpired = "order_expired"
	// CodeOrderCancelled (409): paying a cancelled reservation; Problem.OrderID names it.
	CodeOrderCancelled = "order_cancelled"
	// CodeOrderPaid (409): cancelling a paid order; Problem.OrderID names it.
	CodeOrderPaid = "order_paid"
	// CodeSaleNotStarted (409): the sale starts at Problem.StartsAt; retry after Retry-After.
	CodeSaleNotStarted = "sale_not_started"
	// CodeSalePaused (409): the merchant paused the sale; retry after Retry-After.
	CodeSalePaused = "sale_paused"
	// CodeIdempotencyConflict (409): a restock's key was used before with other units.
	CodeIdempotencyConflict = "idempotency_conflict"
	// CodeSaleEnded (410): the sale ended at Problem.EndsAt.
	CodeSaleEnded = "sale_ended"
	// CodeNotYourTurn (409): the buyer's place in the line is not called yet; retry after Retry-After.
	CodeNotYourTurn = "not_your_turn"
	// CodePlaceExpired (410): the buyer's place was called and its window passed, for good.
	CodePlaceExpired = "place_expired"
	// CodeNoLine (404): the product has no line.
	CodeNoLine = "no_line"
	// CodeRequestTooLarge (413): a request body over 4 KiB.
	CodeRequestTooLarge = "request_too_large"
	// CodeRateLimited (429): too many attempts; retry after Retry-After. Nothing was written.
	CodeRateLimited = "rate_limited"
	// CodeClientClosedRequest (499): the client left first; logs and metrics only.
	CodeClientClosedRequest = "client_closed_request"
	// CodeInternal (500): a bug; the details go to the server's log only.
	CodeInternal = "internal"
	// CodeBusy (503): no lock or time; nothing was written, retry after Retry-After.
	CodeBusy = "busy"
	// CodeUnavailable (503): a backend is down; nothing was written, retry after Retry-After.
	CodeUnavailable = "unavailable"
	// CodeOutcomeUnknown (503): the order may exist; retrying or the order lookup tells.
	CodeOutcomeUnknown = "outcome_unknown"
)

// StatusClientClosedRequest is nginx's 499, CodeClientClosedRequest's status.
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
	CodeSaleNotStarted:      http.StatusConflict,
	CodeSalePaused:          http.StatusConflict,
	CodeIdempotencyConflict: http.StatusConflict,
	CodeSaleEnded:           http.StatusGone,
	CodeNotYourTurn:         http.StatusConflict,
	CodePlaceExpired:        http.StatusGone,
	CodeNoLine:              http.StatusNotFound,
	CodeRequestTooLarge:     http.StatusRequestEntityTooLarge,
	CodeRateLimited:         http.StatusTooManyRequests,
	CodeClientClosedRequest: StatusClientClosedRequest,
	CodeInternal:            http.StatusInternalServerError,
	CodeBusy:                http.StatusServiceUnavailable,
	CodeUnavailable:         http.StatusServiceUnavailable,
	CodeOutcomeUnknown:      http.StatusServiceUnavailable,
}

// Status returns code's HTTP status, or 0 for an unknown code.
func Status(code string) int { return statuses[code] }

// LoadBalancerStatuses returns the statuses the load balancer adds for code: 502 and 504 for
// CodeOutcomeUnknown.
func LoadBalancerStatuses(code string) []int {
	if code == CodeOutcomeUnknown {
		return []int{http.StatusBadGateway, http.StatusGatewayTimeout}
	}
	return nil
}
