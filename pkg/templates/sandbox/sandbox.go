// Package sandbox executes templates stored as content (type 150, text in
// attribute 1280 attributeTemplateSource) with Go's html/template, inside a
// sandbox: a template can only call the functions it is given (no file,
// network or environment access exists in html/template itself), and one
// render is bounded in time, output and concurrency.
//
// html/template cannot be cancelled, so the bounds are built around it:
//
//   - Compile refuses what could loop without bound and without output:
//     {{define}}, {{block}} and {{template}} (self-calling templates grow
//     exponentially; templates call each other only through a function the
//     caller provides, which can count depth) and integer literals larger
//     than Limits.MaxRange where they could become a loop count (check).
//     Every other loop ranges over data, which the caller bounds.
//   - Execute writes through a writer that fails once the deadline has
//     passed or the output exceeds Limits.MaxOutputBytes, which stops a
//     template that produces output.
//   - Every {{range}} body starts with a hidden check of the deadline
//     (tickFunc), so a loop that writes nothing (nested ranges over large
//     data or literals) also stops at the deadline, with the position of
//     the innermost range running then.
//   - A render still running shortly after its deadline (stuck in one
//     function call) is abandoned: Execute returns ErrTimeout, and the
//     goroutine finishes on its own. At most Limits.MaxRunning renders run
//     at a time, abandoned ones included, so runaway renders cannot pile
//     up; they are shared fairly (pkg/fairshare, the caller from the
//     context): one user runs at most Limits.MaxRunningPerUser (beyond
//     that Execute answers a *fairshare.LimitError, 429), and
//     Limits.AdminReserve of the slots are left to administrators, so
//     one reader's runaway renders never make theirs fail; beyond the
//     slots a caller may take Execute answers ErrBusy (503).
//   - printf is replaced by a version that refuses widths and precisions
//     over 1,000 (fmt would build the padded string in memory first).
//
// Errors carry the template's line and column where text/template reports
// them (Error).
//
// This package is the engine only; pkg/templates loads templates and
// objects and gives templates their functions.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/template/parse"
	"time"

	"github.com/cmsplatform/cms/pkg/fairshare"
)

// Limits bound compiling and executing templates. Zero fields take the
// defaults.
type Limits struct {
	// MaxTemplateBytes bounds a template's text (DefaultMaxTemplateBytes).
	MaxTemplateBytes int
	// Timeout bounds one render (DefaultTimeout).
	Timeout time.Duration
	// MaxOutputBytes bounds one render's output (DefaultMaxOutputBytes).
	MaxOutputBytes int
	// MaxRange bounds {{range N}} over an integer literal (DefaultMaxRange).
	MaxRange int
	// MaxRunning bounds the renders executing at once, abandoned ones
	// included (DefaultMaxRunning).
	MaxRunning int
	// MaxRunningPerUser bounds the renders one user executes at once,
	// abandoned ones included (DefaultMaxRunningPerUser).
	MaxRunningPerUser int
	// AdminReserve is how many of MaxRunning only administrators take
	// (DefaultAdminReserve; negative: none).
	AdminReserve int
}

// Defaults of Limits.
const (
	DefaultMaxTemplateBytes = 256 << 10
	DefaultTimeout          = 2 * time.Second
	DefaultMaxOutputBytes   = 8 << 20
	DefaultMaxRange         = 10000
	DefaultMaxRunning       = 16
	// DefaultMaxRunningPerUser and DefaultAdminReserve share the 16
	// slots: one user runs at most 4, other users together at most 12.
	DefaultMaxRunningPerUser = 4
	DefaultAdminReserve      = 4
	// busyRetryAfter is the Retry-After of a refused render: about one
	// render's time limit.
	busyRetryAfter = 2 * time.Second
)

// CapRunningPerUser names the per-user render cap in refusals (the
// setting renderSlotsPerUser).
const CapRunningPerUser = "renderSlotsPerUser"

func (l Limits) withDefaults() Limits {
	if l.MaxTemplateBytes <= 0 {
		l.MaxTemplateBytes = DefaultMaxTemplateBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.MaxRange <= 0 {
		l.MaxRange = DefaultMaxRange
	}
	if l.MaxRunning <= 0 {
		l.MaxRunning = DefaultMaxRunning
	}
	if l.MaxRunningPerUser <= 0 {
		l.MaxRunningPerUser = DefaultMaxRunningPerUser
	}
	l.AdminReserve = fairshare.ReserveOr(l.AdminReserve, DefaultAdminReserve)
	l.MaxRunningPerUser = min(l.MaxRunningPerUser, l.MaxRunning)
	l.AdminReserve = min(l.AdminReserve, l.MaxRunning-1)
	return l
}

// Errors a render ends with; an *Error wraps them with the position.
var (
	ErrInvalid   = errors.New("sandbox: invalid template")
	ErrExecution = errors.New("sandbox: template failed")
	ErrTimeout   = errors.New("sandbox: time limit exceeded")
	ErrTooLarge  = errors.New("sandbox: output limit exceeded")
	ErrBusy      = errors.New("sandbox: too many renders running")
)

// Error is a template error with its position (0 when unknown).
type Error struct {
	Kind         error // ErrInvalid, ErrExecution, ErrTimeout, ErrTooLarge
	Template     string
	Line, Column int
	Msg          string
	// Err is the cause (e.g. the error a function returned), if any.
	Err error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%v: %s:%d:%d: %s", e.Kind, e.Template, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%v: %s: %s", e.Kind, e.Template, e.Msg)
}

// Unwrap makes errors.Is see the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Engine compiles and executes templates under one set of limits; its
// MaxRunning slots are shared by all its renders, fairly between users.
type Engine struct {
	limits  Limits
	running *fairshare.Limiter
}

// New returns an engine with limits l (zero fields: defaults).
func New(l Limits) *Engine {
	l = l.withDefaults()
	return &Engine{limits: l, running: fairshare.New("renders running", fairshare.Limits{Total: l.MaxRunning,
		PerUser: l.MaxRunningPerUser, AdminReserve: l.AdminReserve, RetryAfter: busyRetryAfter, Cap: CapRunningPerUser})}
}

// Running is how many renders run now, abandoned ones included.
func (e *Engine) Running() int { return e.running.InUse() }

// Limits are the engine's limits, defaults filled in.
func (e *Engine) Limits() Limits { return e.limits }

// Template is a compiled template.
type Template struct {
	name string
	t    *template.Template
	e    *Engine
	// stopAt is the deadline (Unix nanoseconds) the range checks stop at:
	// the latest of the executions running (0: none set).
	stopAt atomic.Int64
}

// tickFunc is the name of the deadline check put at the start of every
// {{range}} body.
const tickFunc = "_tick"

// graceAfterDeadline is how long Execute waits past the deadline for a
// render to stop at a range check (which carries the position) before it
// abandons it.
const graceAfterDeadline = 100 * time.Millisecond

// tick fails once the deadline of the template's executions has passed.
func (t *Template) tick() (bool, error) {
	if at := t.stopAt.Load(); at != 0 && time.Now().UnixNano() > at {
		return false, ErrTimeout
	}
	return false, nil
}

// setDeadline moves the range checks' deadline to d unless a later one is
// set (another execution of the same template still running).
func (t *Template) setDeadline(d time.Time) {
	n := d.UnixNano()
	for {
		cur := t.stopAt.Load()
		if cur >= n || t.stopAt.CompareAndSwap(cur, n) {
			return
		}
	}
}

// Compile parses text as the template name with the functions funcs
// (which replace html/template's builtins of the same name; printf is
// always the bounded one).
func (e *Engine) Compile(name, text string, funcs template.FuncMap) (*Template, error) {
	if len(text) > e.limits.MaxTemplateBytes {
		return nil, &Error{Kind: ErrInvalid, Template: name, Msg: fmt.Sprintf("the template has %d bytes, at most %d are allowed", len(text), e.limits.MaxTemplateBytes)}
	}
	out := &Template{name: name, e: e}
	fm := template.FuncMap{"printf": boundedPrintf}
	for k, v := range funcs {
		fm[k] = v
	}
	fm[tickFunc] = out.tick
	t, err := template.New(name).Option("missingkey=zero").Funcs(fm).Parse(text)
	if err != nil {
		return nil, positioned(ErrInvalid, name, err)
	}
	for _, d := range t.Templates() {
		if d.Name() != name {
			return nil, &Error{Kind: ErrInvalid, Template: name, Msg: fmt.Sprintf("{{define}} and {{block}} are not allowed (%q); call other templates through the functions", d.Name())}
		}
	}
	if t.Tree == nil {
		return out, nil // nothing to render
	}
	if err := e.check(name, t.Tree, t.Tree.Root); err != nil {
		return nil, err
	}
	addTicks(t.Tree, t.Tree.Root)
	out.t = t
	return out, nil
}

// addTicks puts {{if _tick}}{{end}} at the start of every {{range}} body
// under n, positioned at the range (so a timeout names it). An {{if}}
// writes nothing and html/template leaves its pipeline alone.
func addTicks(tree *parse.Tree, n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			addTicks(tree, c)
		}
	case *parse.RangeNode:
		addTicks(tree, n.List)
		addTicks(tree, n.ElseList)
		if n.List == nil {
			n.List = &parse.ListNode{NodeType: parse.NodeList, Pos: n.Pos}
		}
		ident := parse.NewIdentifier(tickFunc).SetTree(tree).SetPos(n.Pos)
		cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: n.Pos, Args: []parse.Node{ident}}
		pipe := &parse.PipeNode{NodeType: parse.NodePipe, Pos: n.Pos, Line: n.Line, Cmds: []*parse.CommandNode{cmd}}
		check := &parse.IfNode{BranchNode: parse.BranchNode{NodeType: parse.NodeIf, Pos: n.Pos, Line: n.Line, Pipe: pipe,
			List: &parse.ListNode{NodeType: parse.NodeList, Pos: n.Pos}}}
		n.List.Nodes = append([]parse.Node{check}, n.List.Nodes...)
	case *parse.IfNode:
		addTicks(tree, n.List)
		addTicks(tree, n.ElseList)
	case *parse.WithNode:
		addTicks(tree, n.List)
		addTicks(tree, n.ElseList)
	}
}

// check walks n and refuses {{template}}, and integer literals over
// MaxRange where they could become a loop count: anywhere in a {{range}}
// pipeline and in pipelines that set a variable ({{$n := …}}, also inside
// parentheses, e.g. (or 1e9 0)). Data cannot smuggle one in: decoded JSON
// numbers are float64, over which range fails.
func (e *Engine) check(name string, tree *parse.Tree, n parse.Node) error {
	refuse := func(n parse.Node, msg string) error {
		line, col := 0, 0
		if tree != nil {
			loc, _ := tree.ErrorContext(n)
			line, col = locLineCol(loc)
		}
		return &Error{Kind: ErrInvalid, Template: name, Line: line, Column: col, Msg: msg}
	}
	pipe := func(at parse.Node, p *parse.PipeNode, always bool) error {
		if p == nil || !always && len(p.Decl) == 0 {
			return nil
		}
		if num := e.largeInt(p); num != nil {
			return refuse(at, fmt.Sprintf("%s could become a loop count: at most %d iterations are allowed", num.Text, e.limits.MaxRange))
		}
		return nil
	}
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := e.check(name, tree, c); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		return refuse(n, "{{template}} is not allowed; call other templates through the functions")
	case *parse.ActionNode:
		return pipe(n, n.Pipe, false)
	case *parse.RangeNode:
		if err := pipe(n, n.Pipe, true); err != nil {
			return err
		}
		return e.checkBranch(name, tree, &n.BranchNode)
	case *parse.IfNode:
		if err := pipe(n, n.Pipe, false); err != nil {
			return err
		}
		return e.checkBranch(name, tree, &n.BranchNode)
	case *parse.WithNode:
		if err := pipe(n, n.Pipe, false); err != nil {
			return err
		}
		return e.checkBranch(name, tree, &n.BranchNode)
	}
	return nil
}

func (e *Engine) checkBranch(name string, tree *parse.Tree, b *parse.BranchNode) error {
	if err := e.check(name, tree, b.List); err != nil {
		return err
	}
	if b.ElseList != nil {
		return e.check(name, tree, b.ElseList)
	}
	return nil
}

// largeInt returns an integer literal over MaxRange in p, nested
// pipelines included.
func (e *Engine) largeInt(p *parse.PipeNode) *parse.NumberNode {
	var walk func(n parse.Node) *parse.NumberNode
	walk = func(n parse.Node) *parse.NumberNode {
		switch n := n.(type) {
		case *parse.NumberNode:
			if n.IsInt && n.Int64 > int64(e.limits.MaxRange) || n.IsUint && n.Uint64 > uint64(e.limits.MaxRange) {
				return n
			}
		case *parse.PipeNode:
			for _, c := range n.Cmds {
				if r := walk(c); r != nil {
					return r
				}
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				if r := walk(a); r != nil {
					return r
				}
			}
		case *parse.ChainNode:
			return walk(n.Node)
		}
		return nil
	}
	return walk(p)
}

// Execute renders t over data within the engine's limits; ctx may end it
// earlier. The output is returned only when the render completed.
func (t *Template) Execute(ctx context.Context, data any) ([]byte, error) {
	if t.t == nil {
		return []byte{}, nil
	}
	l := t.e.limits
	release, err := t.e.running.Acquire(ctx, fairshare.CallerFrom(ctx))
	if errors.Is(err, fairshare.ErrBusy) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err // the caller's own cap: a *fairshare.LimitError
	}
	ctx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	t.setDeadline(deadline)
	w := &boundedWriter{ctx: ctx, max: l.MaxOutputBytes}
	done := make(chan error, 1)
	go func() {
		defer release()
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- t.t.Execute(w, data)
	}()
	select {
	case err := <-done:
		return t.result(w, err)
	case <-ctx.Done():
	}
	// A loop stops at its next range check, which names the range.
	grace := time.NewTimer(graceAfterDeadline)
	defer grace.Stop()
	select {
	case err := <-done:
		return t.result(w, err)
	case <-grace.C:
		// Abandoned: the goroutine ends on its own (its writes fail now)
		// and frees its slot then.
		return nil, &Error{Kind: ErrTimeout, Template: t.name, Msg: fmt.Sprintf("not finished within %v", l.Timeout)}
	}
}

// ExecuteInline renders t over data in the calling goroutine, for a
// template called by another one while that one renders (which holds the
// running slot): ctx carries the outer render's deadline, and the output
// is bounded by maxBytes (what the outer render may still write).
func (t *Template) ExecuteInline(ctx context.Context, data any, maxBytes int) ([]byte, error) {
	if t.t == nil {
		return []byte{}, nil
	}
	if d, ok := ctx.Deadline(); ok {
		t.setDeadline(d)
	}
	w := &boundedWriter{ctx: ctx, max: maxBytes}
	return t.result(w, t.t.Execute(w, data))
}

// result classifies the end of one execution: an error of a template
// called from this one (an *Error) is returned as it is, with its own
// position; a range check's timeout has the range's position.
func (t *Template) result(w *boundedWriter, err error) ([]byte, error) {
	l := t.e.limits
	var inner *Error
	switch {
	case w.tooLarge:
		return nil, &Error{Kind: ErrTooLarge, Template: t.name, Msg: fmt.Sprintf("more than %d bytes of output", w.max)}
	case errors.As(err, &inner):
		return nil, inner
	case errors.Is(err, ErrTimeout) && !w.expired:
		return nil, positioned(ErrTimeout, t.name, err)
	case w.expired:
		return nil, &Error{Kind: ErrTimeout, Template: t.name, Msg: fmt.Sprintf("not finished within %v", l.Timeout)}
	case err != nil:
		return nil, positioned(ErrExecution, t.name, err)
	}
	return w.buf.Bytes(), nil
}

// boundedWriter fails writes after the deadline or beyond max bytes. It
// is used by the render goroutine only.
type boundedWriter struct {
	ctx               context.Context
	buf               bytes.Buffer
	max               int
	tooLarge, expired bool
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.ctx.Err() != nil {
		w.expired = true
		return 0, ErrTimeout
	}
	if w.buf.Len()+len(p) > w.max {
		w.tooLarge = true
		return 0, ErrTooLarge
	}
	return w.buf.Write(p)
}

// maxFormatWidth bounds widths and precisions in printf verbs.
const maxFormatWidth = 1000

var formatWidth = regexp.MustCompile(`%[-+# 0]*(\d*)(?:\.(\d*))?`)

// boundedPrintf is fmt.Sprintf refusing widths or precisions over
// maxFormatWidth and the * forms (which take them from arguments).
func boundedPrintf(format string, args ...any) (string, error) {
	for _, m := range formatWidth.FindAllStringSubmatch(format, -1) {
		for _, n := range m[1:] {
			if v, err := strconv.Atoi(n); err == nil && v > maxFormatWidth || len(n) > 4 {
				return "", fmt.Errorf("printf: a width or precision over %d", maxFormatWidth)
			}
		}
	}
	if strings.ContainsRune(format, '*') {
		return "", errors.New("printf: * widths are not allowed")
	}
	return fmt.Sprintf(format, args...), nil
}

// position finds "name:line:col" (or "name:line") in text/template's
// messages.
var position = regexp.MustCompile(`:(\d+)(?::(\d+))?: `)

// positioned wraps err as an *Error of kind with the line and column
// text/template reports.
func positioned(kind error, name string, err error) *Error {
	msg := err.Error()
	out := &Error{Kind: kind, Template: name, Msg: msg, Err: err}
	if m := position.FindStringSubmatch(msg); m != nil {
		out.Line, _ = strconv.Atoi(m[1])
		out.Column, _ = strconv.Atoi(m[2])
	}
	return out
}

// location is the "name:line:col" of parse.Tree.ErrorContext.
var location = regexp.MustCompile(`:(\d+):(\d+)$`)

// locLineCol parses the line and column of a parse.Tree.ErrorContext.
func locLineCol(loc string) (int, int) {
	m := location.FindStringSubmatch(loc)
	if m == nil {
		return 0, 0
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	return line, col
}

// StringArgs returns the string literals t passes as argument arg (1 =
// the first) to calls of the functions fns, e.g. the attribute names of
// {{value . "title"}}: a caller can read what they name in one batch
// before the render asks for them one by one.
func (t *Template) StringArgs(arg int, fns ...string) []string {
	if t.t == nil || t.t.Tree == nil {
		return nil
	}
	var out []string
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n != nil {
				for _, c := range n.Nodes {
					walk(c)
				}
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n != nil {
				for _, c := range n.Cmds {
					walk(c)
				}
			}
		case *parse.CommandNode:
			if id, ok := n.Args[0].(*parse.IdentifierNode); ok && len(n.Args) > arg && slices.Contains(fns, id.Ident) {
				if s, ok := n.Args[arg].(*parse.StringNode); ok && !slices.Contains(out, s.Text) {
					out = append(out, s.Text)
				}
			}
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.ChainNode:
			walk(n.Node)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		}
	}
	walk(t.t.Tree.Root)
	return out
}
