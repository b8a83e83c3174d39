package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// maxBody is the largest request body accepted; every body this API takes is a few dozen bytes.
const maxBody = 4 << 10

// decodeJSON reads exactly one JSON object into dst, a pointer to a struct, rejecting
// unknown fields, keys that are not exactly a field's json tag or that repeat, trailing
// data and bodies over maxBody. Its errors say what is wrong; they may name a key the
// client sent, never a value.
func decodeJSON(c *gin.Context, dst any) error {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBody))
	if err != nil {
		return jsonError(err)
	}
	if err := checkKeys(body, reflect.TypeOf(dst).Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return detailed{"body must hold a single JSON object"}
	}
	return nil
}

// checkKeys rejects a key of the JSON object in body that is not exactly the json tag of
// one of struct t's fields, or that repeats. encoding/json matches keys ignoring case and
// lets a later repeat win, so {"user_id":1,"USER_ID":2} would buy for user 2. Only the
// top-level keys are checked and values are skipped: the bodies are flat. A body that does
// not start with a valid object passes, for the decode to say what is wrong with it.
func checkKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var bad error // the first bad key; reported only if the object is valid JSON
	seen := make(map[string]bool, t.NumField())
	for dec.More() {
		tok, err := dec.Token()
		var skip json.RawMessage
		if err != nil || dec.Decode(&skip) != nil {
			return nil
		}
		key, _ := tok.(string)
		switch {
		case bad != nil:
		case !hasField(t, key):
			bad = detailed{"unknown field " + quoteKey(key)}
		case seen[key]:
			bad = detailed{"duplicate key " + quoteKey(key)}
		}
		seen[key] = true
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil
	}
	return bad
}

// hasField reports whether key is exactly the JSON name of one of struct t's fields.
func hasField(t reflect.Type, key string) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		if f.IsExported() && name != "-" && name == key {
			return true
		}
	}
	return false
}

// maxKeyEcho is how many characters of a client's key an error detail repeats.
const maxKeyEcho = 40

// quoteKey quotes a key the client sent for an error detail, cut to maxKeyEcho characters.
func quoteKey(key string) string {
	n := 0
	for i := range key {
		if n == maxKeyEcho {
			return strconv.Quote(key[:i]) + "..."
		}
		n++
	}
	return strconv.Quote(key)
}

func jsonError(err error) error {
	var (
		tooLarge  *http.MaxBytesError
		syntax    *json.SyntaxError
		typeError *json.UnmarshalTypeError
		parseTime *time.ParseError
	)
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("%w: the limit is %d bytes", errTooLarge, maxBody)
	case errors.Is(err, io.EOF):
		return detailed{"body must be a JSON object"}
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return detailed{"body is not valid JSON"}
	case errors.As(err, &typeError):
		if typeError.Field == "" {
			return detailed{"body must be a JSON object"}
		}
		return detailed{fmt.Sprintf("field %q must be %s", typeError.Field, typeName(typeError.Type.Kind().String()))}
	case errors.As(err, &parseTime), strings.HasPrefix(err.Error(), "Time.UnmarshalJSON"):
		return detailed{"starts_at and ends_at must be RFC 3339 date-times, such as \"2026-12-24T20:00:00Z\""}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// json's unknown-field error names the field, which the client sent: safe to show.
		return detailed{"body: " + err.Error()}
	default: // reading failed: a client too slow for ReadTimeout, a broken connection
		return detailed{"body could not be read"}
	}
}

func typeName(kind string) string {
	switch kind {
	case "int64", "int":
		return "an integer in range"
	case "string":
		return "a string"
	}
	return "of another type"
}

// pathID parses the :id route parameter: a positive 64-bit integer.
func pathID(c *gin.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, detailed{"product id must be a positive 64-bit integer"}
	}
	return id, nil
}
