package tracing

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// LogHandler wraps h so that every record logged with a context carrying
// a valid span context (a span of this process, or the caller's
// traceparent) gets trace_id and span_id at its top level, which joins the
// log lines of a request to its trace.
func LogHandler(h slog.Handler) slog.Handler { return &logHandler{next: h, top: h} }

// logHandler keeps top, the wrapped handler before any WithGroup, so the
// ids stay top-level attributes under groups: groups are replayed onto a
// handler that already has the ids.
type logHandler struct {
	next   slog.Handler // top with attrs and groups applied
	top    slog.Handler // h with the attrs given before the first group
	groups []groupAttrs // groups (and their attrs) opened since top
}

type groupAttrs struct {
	name  string
	attrs []slog.Attr
}

func (l *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return l.next.Enabled(ctx, level)
}

func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return l.next.Handle(ctx, r)
	}
	h := l.top.WithAttrs([]slog.Attr{
		slog.String("trace_id", sc.TraceID().String()),
		slog.String("span_id", sc.SpanID().String()),
	})
	for _, g := range l.groups {
		h = h.WithGroup(g.name)
		if len(g.attrs) > 0 {
			h = h.WithAttrs(g.attrs)
		}
	}
	return h.Handle(ctx, r)
}

func (l *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *l
	c.next = l.next.WithAttrs(attrs)
	if len(l.groups) == 0 {
		c.top = l.top.WithAttrs(attrs)
		return &c
	}
	c.groups = append([]groupAttrs(nil), l.groups...)
	last := &c.groups[len(c.groups)-1]
	last.attrs = append(append([]slog.Attr(nil), last.attrs...), attrs...)
	return &c
}

func (l *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return l
	}
	c := *l
	c.next = l.next.WithGroup(name)
	c.groups = append(append([]groupAttrs(nil), l.groups...), groupAttrs{name: name})
	return &c
}
