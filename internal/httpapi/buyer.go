package httpapi

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/authn"
)

// BuyerVerifier returns a bearer token's user id, or authn.ErrInvalidToken.
type BuyerVerifier interface {
	Verify(token string) (int64, error)
}

// buyerKey holds the verified user id in the gin context.
const buyerKey = "seckill.buyer"

// realm names the buyer routes in WWW-Authenticate (RFC 6750).
const realm = `Bearer realm="seckill"`

// requireBuyer lets a request through only with a bearer token v accepts, and keeps the user
// id it proves for the handler (buyer). Without a token: 401 with a bare challenge; with one
// it refuses: 401 with error="invalid_token" and the reason (RFC 6750 section 3). A nil v
// (identity off) lets every request through.
func requireBuyer(v BuyerVerifier, d Deps) gin.HandlerFunc {
	if v == nil {
		return func(c *gin.Context) { c.Next() }
	}
	return func(c *gin.Context) {
		token, err := authn.BearerToken(c.GetHeader("Authorization"))
		var user int64
		if err == nil {
			user, err = v.Verify(token)
		}
		if err != nil {
			why := strings.TrimPrefix(err.Error(), authn.ErrInvalidToken.Error()+": ")
			challenge := realm
			if errors.Is(err, authn.ErrInvalidToken) {
				challenge += `, error="invalid_token", error_description="the token is ` + strings.ReplaceAll(why, `"`, "'") + `"`
			} else {
				why = "no bearer token"
			}
			d.Logger.InfoContext(c.Request.Context(), "buyer token refused", "method", c.Request.Method,
				"route", c.FullPath(), "remote", c.ClientIP(), "reason", why)
			c.Header("WWW-Authenticate", challenge)
			abortProblem(c, api.CodeUnauthorized, "a valid buyer bearer token is required: "+why)
			return
		}
		c.Set(buyerKey, user)
		c.Next()
	}
}

// errUserMismatch is the 403 of a body whose user_id is not the token's subject.
var errUserMismatch = errors.New("user_id is not the user of the bearer token")

// buyer is the user a purchase is for: the token's user when identity is on (a body user_id
// must then be absent or the same, else errUserMismatch), else the body's, which must be
// positive (errBadUser).
func buyer(c *gin.Context, body int64) (int64, error) {
	v, ok := c.Get(buyerKey)
	if !ok {
		if body <= 0 { // missing and null read as 0
			return 0, errBadUser
		}
		return body, nil
	}
	user := v.(int64)
	if body != 0 && body != user {
		return 0, errUserMismatch
	}
	return user, nil
}

// ownOrder reports whether the order of user (a path's user_id) may be acted on: always when
// identity is off, else only by that user. Another user's order answers as a missing one.
func ownOrder(c *gin.Context, user int64) bool {
	v, ok := c.Get(buyerKey)
	return !ok || v.(int64) == user
}

// productBuyer reads a buyer's request on a product: the id in the path and the body
// {"user_id"}, checked against the buyer's identity (see buyer). Its errors are for writeError.
func productBuyer(c *gin.Context) (id, user int64, err error) {
	if id, err = pathID(c); err != nil {
		return 0, 0, err
	}
	var req api.Purchase
	if err = decodeJSON(c, &req); err != nil {
		return 0, 0, err
	}
	user, err = buyer(c, req.UserID)
	return id, user, err
}

// pathUser reads the product id and the user id of a path /products/:id/.../:user_id. Its
// errors are for writeError.
func pathUser(c *gin.Context) (id, user int64, err error) {
	if id, err = pathID(c); err != nil {
		return 0, 0, err
	}
	if user, err = strconv.ParseInt(c.Param("user_id"), 10, 64); err != nil || user <= 0 {
		return 0, 0, errBadUser
	}
	return id, user, nil
}
