package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/cmsplatform/cms/pkg/tracing"
)

// ClientSettings configure outgoing deliveries (documented defaults in
// docs/webhooks.md).
type ClientSettings struct {
	// Timeout bounds one attempt: dial, request and response (default 10s).
	Timeout time.Duration
	// MaxResponseBytes caps the response body read (default 64 KiB); the
	// rest is discarded unread and the connection closed.
	MaxResponseBytes int64
	// AllowPrivate permits loopback, link-local, private and unspecified
	// addresses (default false: a definition cannot reach the internal
	// network).
	AllowPrivate bool
	// allow, in tests, lets the addresses it accepts pass the guard even
	// without AllowPrivate (a loopback receiver beside a refused one).
	allow func(netip.Addr) bool
}

func (s ClientSettings) withDefaults() ClientSettings {
	if s.Timeout <= 0 {
		s.Timeout = 10 * time.Second
	}
	if s.MaxResponseBytes <= 0 {
		s.MaxResponseBytes = 64 << 10
	}
	return s
}

// ErrAddressRefused is returned when a receiver resolves to an address
// the settings do not allow.
var ErrAddressRefused = errors.New("webhooks: receiver address refused")

// refusedAddress reports whether ip is loopback, link-local, private,
// multicast or unspecified.
func refusedAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsPrivate() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		// 100.64.0.0/10 (carrier-grade NAT) is not public either.
		(ip.Is4() && ip.As4()[0] == 100 && ip.As4()[1]&0xC0 == 64)
}

// Client sends deliveries. The address check runs in the dialer's Control
// func, on the address actually dialled after resolution, so a name that
// resolves differently later (DNS rebinding) cannot bypass it; redirects are
// not followed.
type Client struct {
	settings ClientSettings
	http     *http.Client
}

// NewClient returns a client with settings (zero values take defaults).
func NewClient(settings ClientSettings) *Client {
	settings = settings.withDefaults()
	dialer := &net.Dialer{Timeout: settings.Timeout, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrAddressRefused, address)
		}
		if settings.allow != nil && settings.allow(ap.Addr()) {
			return nil
		}
		if !settings.AllowPrivate && refusedAddress(ap.Addr()) {
			return fmt.Errorf("%w: %s is not a public address", ErrAddressRefused, ap.Addr())
		}
		return nil
	}}
	tr := &http.Transport{
		DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: settings.Timeout, ResponseHeaderTimeout: settings.Timeout,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second,
	}
	return &Client{settings: settings, http: &http.Client{
		Transport: tr, Timeout: settings.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	At       time.Time
	Status   int // HTTP status; 0 = no response
	Duration time.Duration
	Err      string // "" = delivered (2xx)
	// RetryAfter is the receiver's Retry-After (seconds form), 0 = none.
	RetryAfter time.Duration
	// Refused: the receiver's address was refused (ErrAddressRefused).
	Refused bool
}

// OK reports whether the receiver accepted the delivery.
func (a Attempt) OK() bool { return a.Err == "" }

// Error is the attempt's failure as an error, nil when it was delivered.
func (a Attempt) Error() error {
	if a.OK() {
		return nil
	}
	return errors.New(a.Err)
}

// Deliver POSTs body to url signed with secret at now. Any 2xx accepts;
// everything else (including refused addresses) is a failed attempt.
func (c *Client) Deliver(ctx context.Context, url string, secret, body []byte, deliveryID string, now time.Time) Attempt {
	a := Attempt{At: now}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		a.Err = err.Error()
		return a
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		a.Err = "webhooks: the URL must be http or https"
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "cms-webhooks/1")
	req.Header.Set("X-Cms-Delivery", deliveryID)
	req.Header.Set(SignatureHeader, Sign(secret, now, body))
	if tp := tracing.Traceparent(ctx); tp != "" {
		req.Header.Set("traceparent", tp)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		a.Duration, a.Err, a.Refused = time.Since(start), err.Error(), errors.Is(err, ErrAddressRefused)
		return a
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, c.settings.MaxResponseBytes))
	_ = resp.Body.Close()
	a.Duration, a.Status = time.Since(start), resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a.Err = "receiver answered " + resp.Status
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			a.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return a
}
