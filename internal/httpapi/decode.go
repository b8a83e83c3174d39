package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// maxBody is the largest request body accepted; every body this API takes is a few dozen bytes.
const maxBody = 4 << 10

// decodeJSON reads exactly one JSON object into dst, rejecting unknown fields, trailing
// data and bodies over maxBody. Its errors say what is wrong without echoing the body.
func decodeJSON(c *gin.Context, dst any) error {
	body := http.MaxBytesReader(c.Writer, c.Request.Body, maxBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return jsonError(err)
		}
		return detailed{"body must hold a single JSON object"}
	}
	return nil
}

func jsonError(err error) error {
	var (
		tooLarge  *http.MaxBytesError
		syntax    *json.SyntaxError
		typeError *json.UnmarshalTypeError
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
