package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// FuzzDecodeBodies fuzzes the body decoder without any backing service (so it runs, and
// finds, even where PostgreSQL and Redis are absent): the decoder never panics and fails
// only with a client error, it accepts what the reference strictDecode accepts, with the
// same value, and what it accepts survives a round trip.
func FuzzDecodeBodies(f *testing.F) {
	for _, seed := range []string{
		`{"user_id":1}`, `{"user_id":-1}`, `{"user_id":1,"user_id":2}`, `{"User_Id":3}`, `{"user_id":1} x`,
		`{"user_id":1,"USER_ID":2}`, `{"USER_ID":2,"user_id":1}`, `{"user\u005fid":4}`, `{"user_id":{"USER_ID":1}}`,
		`{"name":"w","stock":1,"strategy":"redis","think_ms":5}`, `{"name":"\u00e9\ud800","stock":null}`,
		`{"name":"w","stock":1,"stock":2}`, `{"name":"w","Stock":1}`, `{"name":"w","stock":1,"think_MS":3}`,
		`{"stock":1e2}`, `[`, `""`, ``, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var buy api.Purchase
		err := decodeInto(body, &buy)
		agree(t, body, err, &buy, new(api.Purchase))
		roundTrip(t, err, &buy, new(api.Purchase))
		var create api.NewProduct
		err = decodeInto(body, &create)
		agree(t, body, err, &create, new(api.NewProduct))
		roundTrip(t, err, &create, new(api.NewProduct))
	})
}

// agree checks that decodeJSON's answer (err, and got when err is nil) for body is the
// reference's (decoding into fresh).
func agree(t *testing.T, body []byte, err error, got, fresh any) {
	t.Helper()
	refErr := strictDecode(body, fresh)
	if (err == nil) != (refErr == nil) || err == nil && !reflect.DeepEqual(got, fresh) {
		t.Fatalf("body %q: decodeJSON = %s, %v; reference = %s, %v", body, asJSON(got), err, asJSON(fresh), refErr)
	}
}

func asJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
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

// strictDecode is the reference reading of a body: at most 4 KiB holding one JSON object
// (or null) whose keys are exactly json tags of dst's fields, each at most once, or an
// error. It finds the keys by walking every token, not the way decodeJSON does.
func strictDecode(body []byte, dst any) error {
	if len(body) > 4<<10 {
		return errors.New("too large")
	}
	t := reflect.TypeOf(dst).Elem()
	tags := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		tags[name] = true
	}
	seen := map[string]bool{}
	for _, key := range objectKeys(body) {
		if !tags[key] || seen[key] {
			return fmt.Errorf("key %q", key)
		}
		seen[key] = true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// objectKeys lists the keys of the JSON object body starts with, in order, repeats
// included, nested objects' keys excluded. It stops at the first invalid token.
func objectKeys(body []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for depth, atKey := 1, true; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		default:
			if depth == 1 && atKey {
				keys = append(keys, tok.(string))
				atKey = false
				continue
			}
		}
		if depth == 1 { // a value of the top-level object ended: a key comes next
			atKey = true
		}
	}
	return keys
}
