package httpapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/api"
)

// TestDecodeKeys: keys must be exactly a field's json tag, each once, at the top level;
// the detail names the key (cut short), never a value, and malformed JSON is reported as
// such before any key.
func TestDecodeKeys(t *testing.T) {
	long := strings.Repeat("k", 100)
	tests := []struct {
		body   string
		create bool   // decode an api.NewProduct, not an api.Purchase
		want   string // the detail; "" for accepted
	}{
		{`{"user_id":1}`, false, ""},
		{`{"user\u005fid":1}`, false, ""}, // the key is user_id, however it is escaped
		{`null`, false, ""},
		{`{"user_id":1,"user_id":2}`, false, `duplicate key "user_id"`},
		{`{"user_id":1,"USER_ID":2}`, false, `unknown field "USER_ID"`},
		{`{"USER_ID":2,"user_id":1}`, false, `unknown field "USER_ID"`},
		{`{"User_Id":3}`, false, `unknown field "User_Id"`},
		{`{"user_id":1,"x":"secret-value"}`, false, `unknown field "x"`},
		{`{"` + long + `":1}`, false, `unknown field "` + long[:maxKeyEcho] + `"...`},
		{`{"user_id":{"USER_ID":1,"USER_ID":2}}`, false, `field "user_id" must be an integer in range`},
		{`{"USER_ID":1,`, false, "body is not valid JSON"},
		{`{"user_id":1,"user_id":2`, false, "body is not valid JSON"},
		{`{"user_id":1} {"user_id":2}`, false, "body must hold a single JSON object"},
		{`{"name":"w","stock":1,"strategy":"redis","think_ms":5}`, true, ""},
		{`{"name":"w","stock":1,"stock":2}`, true, `duplicate key "stock"`},
		{`{"name":"w","stock":1,"Think_MS":2}`, true, `unknown field "Think_MS"`},
		{`{"name":"w","stock":1,"strategy":"redis","strategy":""}`, true, `duplicate key "strategy"`},
	}
	for _, tt := range tests {
		var dst any = new(api.Purchase)
		if tt.create {
			dst = new(api.NewProduct)
		}
		err := decodeInto([]byte(tt.body), dst)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tt.body, err)
			}
			continue
		}
		if got := detail(err); got != tt.want || !errors.Is(err, errBadRequest) {
			t.Errorf("%s: %v, want %q (a bad request)", tt.body, err, tt.want)
		}
	}
}

// TestDecodeTooLarge: a body over maxBody is refused as too large, even after a complete
// object.
func TestDecodeTooLarge(t *testing.T) {
	for _, body := range []string{
		`{"user_id":1,"x":"` + strings.Repeat("a", maxBody) + `"}`,
		`{"user_id":1}` + strings.Repeat(" ", maxBody),
	} {
		if err := decodeInto([]byte(body), new(api.Purchase)); !errors.Is(err, errTooLarge) {
			t.Errorf("%d-byte body: %v, want errTooLarge", len(body), err)
		}
	}
	exact := `{"user_id":1}` + strings.Repeat(" ", maxBody-13)
	if err := decodeInto([]byte(exact), new(api.Purchase)); err != nil {
		t.Errorf("%d-byte body: %v, want accepted", len(exact), err)
	}
}
