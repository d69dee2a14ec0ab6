package gateway

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// EventStreamWriteTimeout bounds writing one server-sent event (or
// comment): a client that does not read for that long is disconnected.
// It replaces the server's WriteTimeout, which would cut every stream.
const EventStreamWriteTimeout = 30 * time.Second

// EventStream writes server-sent events (text/event-stream): each event
// is flushed as it is written (nothing buffers or compresses it), the
// request's read deadline is lifted (the server's ReadTimeout would
// otherwise end the request's context) and each write has its own
// deadline (EventStreamWriteTimeout).
type EventStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// StartEventStream answers 200 with the event stream's headers.
func StartEventStream(w http.ResponseWriter) *EventStream {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // not every writer supports it (tests' recorders)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache, no-store")
	h.Set("X-Accel-Buffering", "no") // proxies such as nginx: do not buffer
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	s := &EventStream{w: w, rc: rc}
	return s
}

// Event writes one event; id and event are single lines, data one JSON
// document (no newline).
func (s *EventStream) Event(id, event string, data []byte) error {
	var b strings.Builder
	if id != "" {
		b.WriteString("id: " + oneLine(id) + "\n")
	}
	if event != "" {
		b.WriteString("event: " + oneLine(event) + "\n")
	}
	b.WriteString("data: " + oneLine(string(data)) + "\n\n")
	return s.write(b.String())
}

// Comment writes a comment line (heartbeats), ignored by EventSource.
func (s *EventStream) Comment(text string) error { return s.write(": " + oneLine(text) + "\n\n") }

// Retry sets the client's reconnection delay.
func (s *EventStream) Retry(d time.Duration) error {
	return s.write("retry: " + strconv.FormatInt(d.Milliseconds(), 10) + "\n\n")
}

func (s *EventStream) write(frame string) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(EventStreamWriteTimeout))
	if _, err := s.w.Write([]byte(frame)); err != nil {
		return err
	}
	return s.rc.Flush()
}

// lineBreaks would start another field.
var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// oneLine keeps a field from starting another one.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return lineBreaks.Replace(s)
}
