package httpapi

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/inventory"
)

// handleJoinLine: POST /api/v1/products/:id/line, a place in the product's line for the
// buyer (202, the place, its lookup in Location). Joining again keeps the place.
func handleJoinLine(d Deps) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, user, err := productBuyer(c)
		if err != nil {
			writeError(c, d, err)
			return
		}
		pl, err := d.Orders.JoinLine(c.Request.Context(), id, user)
		if err != nil {
			writeError(c, d, err)
			return
		}
		p, _ := d.Products.Meta(c.Request.Context(), id) // cached by JoinLine
		c.Header("Location", fmt.Sprintf("/api/v1/products/%d/line/%d", id, user))
		c.JSON(http.StatusAccepted, placeOf(p, user, pl))
	}
}

// handleLinePlace: GET /api/v1/products/:id/line/:user_id, the user's place (200). With
// buyer identity on, another user's place answers not_in_line without being read.
func handleLinePlace(d Deps) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, user, err := pathUser(c)
		if err != nil {
			writeError(c, d, err)
			return
		}
		p, err := d.Products.Meta(c.Request.Context(), id)
		if err != nil {
			writeError(c, d, err)
			return
		}
		var pl inventory.Place
		if ownOrder(c, user) {
			if pl, err = d.Orders.LinePlace(c.Request.Context(), id, user); err != nil {
				writeError(c, d, err)
				return
			}
		} else if !p.HasLine() {
			writeError(c, d, inventory.ErrNoLine)
			return
		}
		c.JSON(http.StatusOK, placeOf(p, user, pl))
	}
}

// placeOf is pl, user's place in p's line, as the contract shows it.
func placeOf(p inventory.Product, user int64, pl inventory.Place) api.LinePlace {
	out := api.LinePlace{ProductID: p.ID, UserID: user, State: pl.State.String(), Drawn: pl.Drawn()}
	if p.StartsAt != nil {
		out.StartsAt = *p.StartsAt
	}
	if pl.State == inventory.NotInLine {
		return out
	}
	if !pl.CalledAt.IsZero() {
		out.CalledAt = &pl.CalledAt
		out.WaitMS = max(0, pl.CalledAt.Sub(pl.Now).Milliseconds())
	}
	if pl.Drawn() {
		out.Position = pl.Rank + 1
		out.Ahead = max(0, pl.Rank-pl.Head)
		out.CalledUntil = &pl.Until
	}
	return out
}

// writeLineProblem answers a purchase the line refuses: 409 not_your_turn with Retry-After
// (until the place is called) and the position once drawn, 410 place_expired, or 404 no_line.
func writeLineProblem(c *gin.Context, err error) {
	var le *inventory.LineError
	errors.As(err, &le)
	switch {
	case errors.Is(err, inventory.ErrNoLine):
		abortProblem(c, api.CodeNoLine, "this product has no line")
	case errors.Is(err, inventory.ErrPlaceExpired):
		abortProblem(c, api.CodePlaceExpired, "your place in the line was called and its window passed")
	default:
		p := api.NewProblem(api.CodeNotYourTurn, "your place in the line is not called yet: retry after Retry-After, or follow GET /api/v1/products/{id}/line/{user_id}")
		wait := time.Second
		if le != nil {
			wait = le.Place.CalledAt.Sub(le.Place.Now)
			if le.Place.Drawn() {
				p.Position = le.Place.Rank + 1
			}
		}
		c.Header("Retry-After", strconv.FormatInt(max(1, int64(math.Ceil(wait.Seconds()))), 10))
		writeProblem(c, p)
	}
}

// lineSpec is a creation's line, as the domain takes it.
func lineSpec(l *api.Line) *inventory.LineSpec {
	if l == nil {
		return nil
	}
	return &inventory.LineSpec{Rate: l.Rate, WindowMS: l.WindowMS}
}
