// Package templates renders templates stored as content (objects of type
// 150 whose text is attribute 1280 attributeTemplateSource) over objects
// read from the current Management view of a branch (pkg/content), with
// the sandboxed engine of pkg/templates/sandbox and the function set of funcs.go:
// values along the language and variant fallback (pkg/model's rules),
// references, display names, culture formatting (format.go), sanitized
// XHTML and calling other templates (depth-limited, no cycles).
//
// Each render reads through its own loader (loader.go), which reads in
// batches, keeps what it read and bounds how many objects are read.
// RenderBatch runs many renders with bounded concurrency.
package templates

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/etag"
	"github.com/cmsplatform/cms/pkg/hyphenate"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/rendercache"
	"github.com/cmsplatform/cms/pkg/templates/sandbox"
	"github.com/cmsplatform/cms/pkg/tracing"
	"golang.org/x/text/language"
)

// ContentType is the media type of every rendered template.
const ContentType = "text/html; charset=utf-8"

// SandboxPolicy is the Content-Security-Policy of a render served from the
// API's origin: a template is written by a branch editor, and its HTML must
// not run script with the authority of whoever opens it (a sandbox without
// allow-scripts gives the page an opaque origin and no scripts; forms and
// links still work, images and stylesheets still load). An operator who
// serves the Rendering group from an origin of its own turns it off
// (renderSeparateOrigin).
const SandboxPolicy = "sandbox allow-forms allow-popups allow-popups-to-escape-sandbox; script-src 'none'; object-src 'none'; base-uri 'none'"

// Limits bound renders. Zero fields take the defaults.
type Limits struct {
	// Engine bounds compiling and executing one template (time, output,
	// renders at once; pkg/templates/sandbox's defaults).
	Engine sandbox.Limits
	// MaxObjects bounds the objects one request names (DefaultMaxObjects).
	MaxObjects int
	// MaxReads bounds the objects one render reads, templates, referenced
	// objects, attributes and types included (DefaultMaxReads).
	MaxReads int
	// MaxDepth bounds how deep templates call templates (DefaultMaxDepth).
	MaxDepth int
	// MaxBatch bounds the jobs of one batch (DefaultMaxBatch).
	MaxBatch int
	// BatchConcurrency bounds the jobs of one batch rendering at once
	// (DefaultBatchConcurrency).
	BatchConcurrency int
	// MaxBatchBytes bounds the outputs of one batch together
	// (DefaultMaxBatchBytes).
	MaxBatchBytes int
}

// Defaults of Limits, and the bounds of the other request lists.
const (
	DefaultMaxObjects       = 500
	DefaultMaxReads         = 2000
	DefaultMaxDepth         = 8
	DefaultMaxBatch         = 100
	DefaultBatchConcurrency = 4
	DefaultMaxBatchBytes    = 16 << 20
	// MaxLanguages and MaxVariants bound those request lists.
	MaxLanguages = 16
	MaxVariants  = 64
	// MaxParameters bounds the parameters, MaxParameterBytes each name
	// and value.
	MaxParameters     = 64
	MaxParameterBytes = 4096
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxObjects, DefaultMaxObjects)
	def(&l.MaxReads, DefaultMaxReads)
	def(&l.MaxDepth, DefaultMaxDepth)
	def(&l.MaxBatch, DefaultMaxBatch)
	def(&l.BatchConcurrency, DefaultBatchConcurrency)
	def(&l.MaxBatchBytes, DefaultMaxBatchBytes)
	return l
}

// Service renders templates.
type Service struct {
	r      Reader
	log    *slog.Logger
	limits Limits
	engine *sandbox.Engine
	cache  *rendercache.Cache // nil: nothing cached
}

// New returns a Service reading through r (the Management domain),
// logging to log (nil: nowhere).
func New(r Reader, l Limits, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l = l.withDefaults()
	return &Service{r: r, log: log, limits: l, engine: sandbox.New(l.Engine)}
}

// WithCache keeps renders in c (see Render); it returns s.
func (s *Service) WithCache(c *rendercache.Cache) *Service {
	s.cache = c
	return s
}

// CacheStats are the render cache's counters (zero without one).
func (s *Service) CacheStats() rendercache.Stats { return s.cache.Stats() }

// Request is one render.
type Request struct {
	Branch     string
	Template   string   // id, GUID or ApiIdentifier of a type-150 object
	Objects    []string // ids, GUIDs or ApiIdentifiers
	Languages  []string // ids, ApiIdentifiers or ISO codes; default en-US
	Variants   []string // ids or ApiIdentifiers
	Parameters map[string]string
	UICulture  string // formats dates and numbers; default: the language's
	Hyphenate  bool
	Caller     *auth.Principal
}

// Result is a rendered template.
type Result struct {
	// HTML may be shared with the render cache: never modify it.
	HTML []byte
	// ETag is a strong validator over the output and the request it was
	// rendered for.
	ETag string
}

// Errors of a render besides content's (unknown branch, template or
// object: content.ErrNotFound).
var (
	errInvalid = errkind.New(errkind.Invalid, "invalid render request")
	// ErrTemplate is a template that does not compile, fails while
	// rendering, or exceeds the time or output limit (422); the error is a
	// *TemplateError with the position.
	ErrTemplate = errkind.New(errkind.Unprocessable, "template error")
)

// TemplateError is a template that failed, with its position in the
// failing template's text (0 when unknown).
type TemplateError struct {
	Template     int64 // the failing template's id (a called one, maybe)
	Line, Column int
	Msg          string
}

func (e *TemplateError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("template %d, line %d, column %d: %s", e.Template, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("template %d: %s", e.Template, e.Msg)
}

// Unwrap makes errors.Is(err, ErrTemplate) true.
func (e *TemplateError) Unwrap() error { return ErrTemplate }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errInvalid}, args...)...)
}

// Render renders req.Template over req.Objects. With a cache (WithCache)
// an answer is served from it when the cache is current with the store
// (rendercache.Cache.GetOrBuild), else rendered and stored, tagged with
// everything the render read (the loader's tags; renders that read a
// user object are not stored). The key is the request and the caller's
// visibility (cacheKey).
func (s *Service) Render(ctx context.Context, req Request) (Result, error) {
	if err := s.check(req); err != nil {
		return Result{}, err
	}
	e, err := s.cache.GetOrBuild(ctx, cacheKey(req), func() (rendercache.Entry, []string, error) {
		rctx, span := tracing.Start(ctx, "templates.render", trace.SpanKindInternal)
		span.SetAttributes(attribute.String("cms.template", req.Template), attribute.Int("cms.objects", len(req.Objects)))
		res, tags, err := s.render(rctx, req)
		tracing.End(span, err)
		return rendercache.Entry{Body: res.HTML, ETag: res.ETag}, tags, err
	})
	return Result{HTML: e.Body, ETag: e.ETag}, err
}

// render renders req and returns the cache tags of what it read (nil:
// not cacheable).
func (s *Service) render(ctx context.Context, req Request) (Result, []string, error) {
	r := &run{s: s, ld: newLoader(s.r, req.Branch, req.Caller, s.limits.MaxReads), compiled: map[string]*sandbox.Template{}}
	if req.Caller != nil {
		// The engine shares its slots by the caller of the context.
		ctx = auth.WithPrincipal(ctx, *req.Caller)
	}
	// The reads share the render's deadline.
	ctx, cancel := context.WithTimeout(ctx, s.engine.Limits().Timeout)
	defer cancel()
	r.ctx = ctx
	// The template and the objects in one read.
	all, err := r.ld.objects(ctx, append([]string{req.Template}, req.Objects...))
	if err != nil {
		return Result{}, nil, err
	}
	tpl, err := r.template(req.Template)
	if err != nil {
		return Result{}, nil, err
	}
	objs := all[1:]
	for i, o := range objs {
		if o.Deleted {
			return Result{}, nil, fmt.Errorf("%w: object %q is deleted", content.ErrNotFound, req.Objects[i])
		}
	}
	iso, err := r.setChains(req)
	if err != nil {
		return Result{}, nil, err
	}
	r.data = Data{Objects: objs, Language: iso, Culture: r.culture.String(), Parameters: req.Parameters}
	if len(objs) > 0 {
		r.data.Object = objs[0]
	}
	if r.data.Parameters == nil {
		r.data.Parameters = map[string]string{}
	}
	r.stack = []int64{tpl.ID}
	compiled, err := r.compile(tpl)
	if err != nil {
		return Result{}, nil, err
	}
	out, err := compiled.Execute(ctx, r.data)
	if err != nil {
		return Result{}, nil, s.renderErr(tpl.ID, err)
	}
	if req.Hyphenate {
		var b bytes.Buffer
		if err := hyphenate.HTML(&b, string(out), iso); err != nil {
			return Result{}, nil, fmt.Errorf("hyphenate: %w", err) // errkind.TooLarge beyond its input bound
		}
		out = b.Bytes()
	}
	return Result{HTML: out, ETag: etag.Of("render", out, []string{requestKey(req)})}, r.ld.cacheTags(), nil
}

// check bounds the request's lists.
func (s *Service) check(req Request) error {
	switch {
	case req.Template == "":
		return invalidf("no template")
	case len(req.Objects) > s.limits.MaxObjects:
		return invalidf("objects: at most %d, got %d", s.limits.MaxObjects, len(req.Objects))
	case len(req.Languages) > MaxLanguages:
		return invalidf("languages: at most %d, got %d", MaxLanguages, len(req.Languages))
	case len(req.Variants) > MaxVariants:
		return invalidf("variants: at most %d, got %d", MaxVariants, len(req.Variants))
	case len(req.Parameters) > MaxParameters:
		return invalidf("parameters: at most %d, got %d", MaxParameters, len(req.Parameters))
	case len(req.UICulture) > 64:
		return invalidf("uiCulture: at most 64 characters")
	}
	for k, v := range req.Parameters {
		if len(k) > MaxParameterBytes || len(v) > MaxParameterBytes {
			return invalidf("parameter %.32q: names and values have at most %d bytes", k, MaxParameterBytes)
		}
	}
	for _, list := range [][]string{req.Objects, req.Languages, req.Variants} {
		for _, id := range list {
			if _, err := content.ParseIdent(id); err != nil {
				return fmt.Errorf("%w: %w", errInvalid, err)
			}
		}
	}
	return nil
}

// setChains resolves the languages and variants of req into r's chains
// and culture; it returns the render language's ISO code.
func (r *run) setChains(req Request) (string, error) {
	idents := req.Languages
	if len(idents) == 0 {
		idents = []string{strconv.FormatInt(content.LanguageEnUS, 10)}
	}
	var iso string
	for i, ident := range idents {
		lg, err := r.ld.language(r.ctx, ident)
		if err != nil {
			return "", err
		}
		if i == 0 {
			iso = lg.iso
		}
		chain, err := r.ld.languageChain(r.ctx, lg.id)
		if err != nil {
			return "", err
		}
		for _, l := range chain {
			if l != 0 && !slices.Contains(r.langs, l) {
				r.langs = append(r.langs, l)
			}
		}
	}
	r.langs = append(r.langs, 0)
	var variants []int64
	if len(req.Variants) > 0 {
		vs, err := r.ld.objects(r.ctx, req.Variants)
		if errors.Is(err, content.ErrNotFound) {
			return "", invalidf("variants: %v", err)
		}
		if err != nil {
			return "", err
		}
		for _, v := range vs {
			variants = append(variants, v.ID)
		}
	}
	r.variants = model.VariantChain(variants)
	culture := req.UICulture
	if culture == "" {
		culture = iso
	}
	tag, err := language.Parse(culture)
	if err != nil && culture == req.UICulture {
		return "", invalidf("uiCulture %q is no language tag", culture)
	}
	if err != nil {
		tag = language.AmericanEnglish
	}
	r.culture = tag
	return iso, nil
}

// template reads a template object and checks its type.
func (r *run) template(ident string) (*Object, error) {
	objs, err := r.ld.objects(r.ctx, []string{ident})
	if err != nil {
		return nil, err
	}
	t := objs[0]
	if t.TypeID != content.TypeRazorView || t.Deleted {
		return nil, fmt.Errorf("%w: template %q (no live object of type %d)", content.ErrNotFound, ident, content.TypeRazorView)
	}
	return t, nil
}

// compile compiles t's source with r's functions.
func (r *run) compile(t *Object) (*sandbox.Template, error) {
	var src string
	for _, v := range t.values {
		if v.Attribute == content.AttrTemplateSource && v.Language == 0 && v.Variant == 0 {
			src, _ = decode(v.JSON).(string)
			break
		}
	}
	c, err := r.s.engine.Compile(strconv.FormatInt(t.ID, 10), src, r.funcs())
	if err != nil {
		return nil, r.s.renderErr(t.ID, err)
	}
	if err := r.ld.prefetchAttributes(r.ctx, c.StringArgs(2, attributeFuncs...)); err != nil {
		return nil, err
	}
	return c, nil
}

// render calls another template (by id, GUID or ApiIdentifier) over objs
// (objects or lists of them; none: the calling template's objects),
// inline in the running render.
func (r *run) render(ident any, objs ...any) (template.HTML, error) {
	s, err := identString(ident)
	if err != nil {
		return "", err
	}
	if len(r.stack) >= r.s.limits.MaxDepth {
		return "", fmt.Errorf("templates call each other at most %d deep", r.s.limits.MaxDepth)
	}
	t, err := r.template(s)
	if err != nil {
		return "", err
	}
	if slices.Contains(r.stack, t.ID) {
		return "", fmt.Errorf("template %d calls itself (through %v)", t.ID, r.stack)
	}
	child := *r
	child.stack = append(slices.Clone(r.stack), t.ID)
	if len(objs) > 0 {
		child.data.Objects = nil
		for _, o := range objs {
			switch x := o.(type) {
			case *Object:
				if x != nil {
					child.data.Objects = append(child.data.Objects, x)
				}
			case []*Object:
				child.data.Objects = append(child.data.Objects, x...)
			default:
				return "", fmt.Errorf("render: %T is no object", o)
			}
		}
		child.data.Object = nil
		if len(child.data.Objects) > 0 {
			child.data.Object = child.data.Objects[0]
		}
	}
	// A template called again at the same place of the call stack (e.g.
	// once per object of a list) is compiled once: its functions depend
	// only on the stack.
	key := fmt.Sprint(child.stack)
	c := r.compiled[key]
	if c == nil {
		if c, err = child.compile(t); err != nil {
			return "", err
		}
		r.compiled[key] = c
	}
	out, err := c.ExecuteInline(r.ctx, child.data, r.s.engine.Limits().MaxOutputBytes)
	if err != nil {
		return "", err
	}
	return template.HTML(out), nil //nolint:gosec // the called template's own escaped output
}

// renderErr turns the engine's errors into the domain's: a template's
// failure is a *TemplateError (422), also when a function it called met
// an unknown object or read too many; too many renders at once and an
// unavailable store are unavailable (503).
func (s *Service) renderErr(id int64, err error) error {
	var te *TemplateError
	if errors.As(err, &te) {
		return te
	}
	if errors.Is(err, sandbox.ErrBusy) {
		return &component.UnavailableError{Component: "renderer", Err: err}
	}
	var re *sandbox.Error
	if !errors.As(err, &re) || errors.Is(err, component.ErrUnavailable) {
		return err // not the template's fault (a failing store)
	}
	if n, perr := strconv.ParseInt(re.Template, 10, 64); perr == nil {
		id = n
	}
	return &TemplateError{Template: id, Line: re.Line, Column: re.Column, Msg: strings.TrimPrefix(re.Msg, "template: ")}
}

// cacheKey is the render cache's key of req: the request and what the
// caller may see (administrators see every user object, others only their
// own: the output may differ between them).
func cacheKey(req Request) string {
	who := "anonymous"
	switch c := req.Caller; {
	case c != nil && c.Admin:
		who = "admin"
	case c != nil:
		who = "user:" + strconv.FormatInt(c.UserID, 10)
	}
	h := sha256.Sum256([]byte(requestKey(req) + "\x00" + who))
	return "render:" + base64.RawURLEncoding.EncodeToString(h[:18])
}

// requestKey is what a render was asked for, for its ETag.
func requestKey(req Request) string {
	params := make([]string, 0, len(req.Parameters))
	for k, v := range req.Parameters {
		params = append(params, strconv.Quote(k)+"="+strconv.Quote(v))
	}
	sort.Strings(params)
	return strings.Join([]string{req.Branch, req.Template, strings.Join(req.Objects, ","), strings.Join(req.Languages, ","),
		strings.Join(req.Variants, ","), strings.Join(params, "&"), req.UICulture, strconv.FormatBool(req.Hyphenate)}, "\x00")
}
