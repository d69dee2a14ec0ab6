package jobs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/store"
)

// Task is what a running job's kind works with: the job, its log, its
// progress and its artifacts. Its methods are safe for concurrent use.
type Task struct {
	Job Job
	svc *Service

	mu        sync.Mutex
	log       bytes.Buffer
	truncated bool
	logDirty  bool
	progress  *float64
	info      string
	progDirty bool
	artifacts []string
	// metricsDirty: Job.Metrics changed since the last takeMetrics.
	metricsDirty bool
}

// Service returns the job domain (for kinds that read or write content).
func (t *Task) Service() *Service { return t.svc }

// Logf appends a line to the job's log (readable while the job runs).
// Beyond Limits.MaxLogBytes lines are dropped behind one note.
func (t *Task) Logf(format string, args ...any) {
	line := time.Now().UTC().Format("2006-01-02T15:04:05.000Z") + " " + fmt.Sprintf(format, args...)
	line = strings.TrimRight(line, "\n") + "\n"
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.truncated {
		return
	}
	if t.log.Len()+len(line) > t.svc.lim.MaxLogBytes {
		t.truncated = true
		line = fmt.Sprintf("… log truncated at %d bytes\n", t.svc.lim.MaxLogBytes)
	}
	t.log.WriteString(line)
	t.logDirty = true
}

// SetProgress records progress p (clamped to 0..1) and its description.
func (t *Task) SetProgress(p float64, info string) {
	p = max(0, min(1, p))
	t.mu.Lock()
	t.progress, t.info, t.progDirty = &p, info, true
	t.mu.Unlock()
}

// WriteArtifact stores the artifact rel (a relative path) with the bytes
// write produces, streamed into the blob store.
func (t *Task) WriteArtifact(ctx context.Context, rel, contentType string, write func(io.Writer) error) error {
	clean, err := CleanArtifactPath(rel)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(write(pw)) }()
	_, err = t.svc.blobs.Put(ctx, artifactKey(t.Job.ID, clean), pr, blobs.Meta{ContentType: contentType})
	_ = pr.CloseWithError(err)
	if err != nil {
		return fmt.Errorf("artifact %s: %w", clean, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.artifacts {
		if a == clean {
			return nil
		}
	}
	t.artifacts = append(t.artifacts, clean)
	t.progDirty = true
	return nil
}

// Checkpointed returns a hook for content.Change.InTx that stores cp as the
// job's checkpoint in the transaction of the write it belongs to. It fails
// (rolling the write back) when another runner has taken the job over, so
// two runners never both write.
func (t *Task) Checkpointed(cp Checkpoint) func(context.Context, store.Tx) error {
	return func(ctx context.Context, tx store.Tx) error {
		_, err := changeInTx(ctx, tx, t.Job.ID, func(j *Job) error {
			if j.InstanceID != t.Job.InstanceID {
				return errLost
			}
			j.Checkpoint = &cp
			return nil
		})
		return err
	}
}

// OpenInput opens the job's input file (CreateJobRequest.inputFile).
func (t *Task) OpenInput(ctx context.Context) (io.ReadCloser, error) {
	rc, _, err := t.openInput(ctx)
	return rc, err
}

// openInput opens the job's input file and says its size.
func (t *Task) openInput(ctx context.Context) (io.ReadCloser, int64, error) {
	if t.Job.Input == nil {
		return nil, 0, fmt.Errorf("%w: the job has no input file", ErrInvalid)
	}
	key, err := inputKey(t.Job.Input.Token)
	if err != nil {
		return nil, 0, err
	}
	rc, info, err := t.svc.blobs.Get(ctx, key)
	if err != nil {
		return nil, 0, fmt.Errorf("job input %s: %w", t.Job.Input.Token, err)
	}
	return rc, info.Size, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// takeLog returns the log when it changed since the last call and, with
// limit > 0, is at most limit bytes (a longer one stays for a later call).
func (t *Task) takeLog(limit int) ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.logDirty || (limit > 0 && t.log.Len() > limit) {
		return nil, false
	}
	t.logDirty = false
	return bytes.Clone(t.log.Bytes()), true
}

// takeProgress returns progress and artifacts when they changed.
func (t *Task) takeProgress() (p *float64, info string, artifacts []string, changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed, t.progDirty = t.progDirty, false
	return t.progress, t.info, append([]string(nil), t.artifacts...), changed
}

// Artifact and log keys in the blob store.
func jobPrefix(id int64) string { return fmt.Sprintf("jobs/%d/", id) }

func artifactKey(id int64, rel string) string { return jobPrefix(id) + "artifacts/" + rel }

func logKey(id int64) string { return jobPrefix(id) + "log.txt" }

// CleanArtifactPath checks an artifact path: relative, slash-separated,
// without empty, "." or ".." segments, backslashes or control
// characters, at most 512 bytes. Anything else is ErrInvalid (path
// traversal included).
func CleanArtifactPath(p string) (string, error) {
	if len(p) > 512 {
		return "", invalidf("artifact path of %d bytes is longer than 512", len(p))
	}
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") {
		return "", invalidf("artifact path %q is not a relative path", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", invalidf("artifact path %q has an empty, . or .. segment", p)
		}
		for _, r := range seg {
			if r < 0x20 || r == 0x7f {
				return "", invalidf("artifact path %q has a control character", p)
			}
		}
	}
	if path.Clean(p) != p {
		return "", invalidf("artifact path %q is not clean", p)
	}
	return p, nil
}

// setInfo sets the progress description and leaves the fraction as it is
// (for work whose total is not known in advance).
func (t *Task) setInfo(info string) {
	t.mu.Lock()
	t.info, t.progDirty = info, true
	t.mu.Unlock()
}
