package gateway

import (
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// CORSConfig says which browser origins may call the API.
type CORSConfig struct {
	// AllowedOrigins lists origins ("https://app.example.com"), matched
	// exactly (case-insensitively), or "*". Empty (the default) allows no
	// cross-origin access: no CORS headers are written. Listed origins may
	// send credentials; "*" allows any other origin without credentials, so
	// a browser never sends a user's Basic credentials to the API on
	// behalf of an arbitrary page. "null" (sandboxed frames, file: pages)
	// is never allowed, not even by "*".
	AllowedOrigins []string
}

// CORS wraps h with CORS handling. A preflight from an allowed origin is
// answered 204 with the methods and the request headers the gateway
// forwards; actual requests get the response headers the gateway writes
// exposed. Everything else passes to h untouched (a preflight from another
// origin gets whatever h answers, which browsers treat as a refusal).
func CORS(cfg CORSConfig, h http.Handler) http.Handler {
	allowAll := false
	listed := map[string]bool{}
	for _, o := range cfg.AllowedOrigins {
		switch o = strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/")); o {
		case "*":
			allowAll = true
		case "", "null":
		default:
			listed[o] = true
		}
	}
	if !allowAll && len(listed) == 0 {
		return h
	}
	allowHeaders, exposeHeaders := corsHeaders()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		if len(listed) > 0 {
			// The answer depends on Origin: caches must keep them apart.
			hd.Add("Vary", "Origin")
		}
		origin := r.Header.Get("Origin")
		credentials := listed[strings.ToLower(origin)]
		if origin == "" || strings.EqualFold(origin, "null") || (!credentials && !allowAll) {
			h.ServeHTTP(w, r)
			return
		}
		if credentials {
			hd.Set("Access-Control-Allow-Origin", origin)
			hd.Set("Access-Control-Allow-Credentials", "true")
		} else {
			hd.Set("Access-Control-Allow-Origin", "*")
		}
		hd.Set("Access-Control-Expose-Headers", exposeHeaders)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hd.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
			hd.Set("Access-Control-Allow-Headers", allowHeaders)
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// corsHeaders derives what CORS advertises from the header tables, so it
// allows exactly the request headers the gateway forwards (plus
// Authorization and Content-Type) and exposes exactly the response headers
// it writes.
func corsHeaders() (allow, expose string) {
	req := []string{"Authorization", "Content-Type"}
	for k := range incomingHeaders {
		req = append(req, textproto.CanonicalMIMEHeaderKey(k))
	}
	resp := []string{"Retry-After", "X-Request-Id"}
	for _, v := range outgoingHeaders {
		if v != "WWW-Authenticate" && !slices.Contains(resp, v) {
			resp = append(resp, v)
		}
	}
	slices.Sort(req)
	slices.Sort(resp)
	return strings.Join(req, ", "), strings.Join(resp, ", ")
}
