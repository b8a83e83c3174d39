package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/gin-gonic/gin"
)

// FuzzDecodeBodies fuzzes the body decoder without any backing service (so it runs, and
// finds, even where PostgreSQL and Redis are absent): the decoder never panics and fails
// only with a client error, and what it accepts survives a round trip.
func FuzzDecodeBodies(f *testing.F) {
	for _, seed := range []string{
		`{"user_id":1}`, `{"user_id":-1}`, `{"user_id":1,"user_id":2}`, `{"User_Id":3}`, `{"user_id":1} x`,
		`{"name":"w","stock":1,"strategy":"redis","think_ms":5}`, `{"name":"\u00e9\ud800","stock":null}`,
		`{"stock":1e2}`, `[`, `""`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var buy purchaseRequest
		roundTrip(t, decodeInto(body, &buy), &buy, new(purchaseRequest))
		var create createProductRequest
		roundTrip(t, decodeInto(body, &create), &create, new(createProductRequest))
	})
}

// fuzzEngine backs the test contexts: one engine, not one per input.
var fuzzEngine = func() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	return gin.New()
}()

func testContext(body []byte) *gin.Context {
	c := gin.CreateTestContextOnly(httptest.NewRecorder(), fuzzEngine)
	c.Request = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	return c
}

func decodeInto(body []byte, dst any) error { return decodeJSON(testContext(body), dst) }

// roundTrip checks that err is a client error or, when nil, that got encodes to a body
// that decodes to the same value again (into fresh).
func roundTrip(t *testing.T, err error, got, fresh any) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, errBadRequest) && !errors.Is(err, errTooLarge) {
			t.Fatalf("decode error %v is not a client error", err)
		}
		return
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeInto(b, fresh); err != nil || !reflect.DeepEqual(got, fresh) {
		t.Fatalf("%s decoded to %+v, %v; want %+v", b, fresh, err, got)
	}
}
