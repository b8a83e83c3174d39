package liveui

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// PageTokenHeader carries the per-start token of loadtest ui on every request that changes
// something. The page reads the token from its own <meta name="seckill-page-token">: a page
// of another site cannot read it, so it cannot send it.
const PageTokenHeader = "X-Seckill-Page-Token"

// guard lets a request through only from whoever may use the page: a loopback Host with the
// server's port unless public (403 not_loopback), the access token when one is set (401), and for
// a request that changes something, this server's Origin when sent (403 bad_origin), the page's
// per-start token (403 bad_page_token) and a JSON body (415). Every answer forbids framing and any
// resource from elsewhere; docs/ui.md#safety says why.
func (u *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if !u.Public && !u.ownLoopbackHost(r) {
			uiProblem(w, http.StatusForbidden, "not_loopback", "this server answers its own loopback address only (127.0.0.1, localhost or [::1], with the port it listens on); start it with -public to serve others")
			return
		}
		if u.AccessToken != "" && !u.hasAccess(r) {
			h.Set("WWW-Authenticate", `Basic realm="loadtest ui", charset="UTF-8"`)
			uiProblem(w, http.StatusUnauthorized, "unauthorized", "this page wants its access token (-access-token of loadtest ui) as the password of basic auth (any user name)")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
				uiProblem(w, http.StatusForbidden, "bad_origin", "Origin "+o+" is not this server: only the page itself may start or stop runs")
				return
			}
			if !sameSecret(r.Header.Get(PageTokenHeader), u.pageToken) {
				uiProblem(w, http.StatusForbidden, "bad_page_token", "this request does not carry the page's token ("+PageTokenHeader+"); it changes at each start of loadtest ui: reload the page")
				return
			}
			if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				uiProblem(w, http.StatusUnsupportedMediaType, "bad_request", "send JSON (Content-Type: application/json)")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hasAccess reports whether r carries the access token as its basic auth password.
func (u *Server) hasAccess(r *http.Request) bool {
	_, pass, ok := r.BasicAuth()
	return ok && sameSecret(pass, u.AccessToken)
}

// sameSecret compares got with want in constant time (their hashes: not even the length of
// want shows).
func sameSecret(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return want != "" && subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// ownLoopbackHost reports whether r's Host is a loopback name with the port of the address r
// came in on.
func (u *Server) ownLoopbackHost(r *http.Request) bool {
	if !Loopback(r.Host) {
		return false
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	_, port, err := net.SplitHostPort(local.String())
	return err == nil && hostPort(r.Host, "80") == port
}

// Loopback reports whether hostport (a Host header) names this machine's loopback.
func Loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostPort is the port of hostport, or def when it names none.
func hostPort(hostport, def string) string {
	if _, p, err := net.SplitHostPort(hostport); err == nil && p != "" {
		return p
	}
	return def
}

// hostName is hostport without its port, in lower case.
func hostName(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(strings.Trim(hostport, "[]"))
}

// sameOrigin reports whether origin (an Origin header) names the host and port of host (the
// request's Host header); a missing port is the default port of origin's scheme.
func sameOrigin(origin, host string) bool {
	o, err := url.Parse(origin)
	if err != nil || o.Host == "" || (o.Scheme != "http" && o.Scheme != "https") {
		return false // "null" (a sandboxed or file page) among them
	}
	def := "80"
	if o.Scheme == "https" {
		def = "443"
	}
	return hostName(o.Host) == hostName(host) && hostPort(o.Host, def) == hostPort(host, def)
}
