package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/cmsplatform/cms/pkg/content"
)

// Built-in job kinds: the ApiIdentifiers of the bootstrapped definitions.
const (
	KindExportJSON   = "jobExportJson"
	KindExportCSV    = "jobExportCsv"
	KindImportJSON   = "jobImportJson"
	KindReindex      = "jobReindex"
	KindCleanupFiles = "jobCleanupFiles"
	// KindPromoteRelease promotes the job's branch (a release) into its
	// parent: release.go.
	KindPromoteRelease = "jobPromoteRelease"
)

// DefinitionPromoteRelease is the id of the bootstrapped definition of
// KindPromoteRelease, which ScheduleRelease starts.
const DefinitionPromoteRelease int64 = 1205

// Kinds lists the built-in kinds.
var Kinds = []string{KindExportJSON, KindExportCSV, KindImportJSON, KindReindex, KindCleanupFiles, KindPromoteRelease}

// installationKinds act on the whole installation, not on the branch a job
// of theirs names: only administrators start, change or delete such jobs.
var installationKinds = map[string]bool{KindReindex: true, KindCleanupFiles: true}

// InstallationWide reports whether jobs of d act on the whole installation
// (the file clean-up, the re-index) rather than on their branch.
func (d Definition) InstallationWide() bool { return installationKinds[d.Kind] }

// Definition is a resolved job definition.
type Definition struct {
	ID   int64
	Kind string
	// Defaults are the definition's default parameters.
	Defaults []Parameter
}

func isKind(s string) bool {
	for _, k := range Kinds {
		if k == s {
			return true
		}
	}
	return false
}

// Definition resolves job definition id as seen from branch: a live
// object of type 120 that is a built-in definition or names one in
// content.AttrJobKind. Anything else is ErrNotFound (not a definition) or
// ErrInvalid (a definition naming no built-in kind).
func (s *Service) Definition(ctx context.Context, branch, id int64) (Definition, error) {
	o, err := s.content.GetObject(ctx, strconv.FormatInt(branch, 10), strconv.FormatInt(id, 10),
		content.ReadOptions{Inherited: true})
	if errors.Is(err, content.ErrNotFound) || (err == nil && (o.TypeID != content.TypeJobDefinition || o.Deleted)) {
		return Definition{}, notFoundf("job definition %d", id)
	}
	if err != nil {
		return Definition{}, err
	}
	d := Definition{ID: id}
	if isKind(o.APIIdentifier) {
		d.Kind = o.APIIdentifier
	}
	for _, v := range o.Values {
		switch v.Attribute {
		case content.AttrJobKind:
			var k string
			if d.Kind == "" && json.Unmarshal(v.JSON, &k) == nil && isKind(k) {
				d.Kind = k
			}
		case content.AttrJobParameters:
			var text string
			if json.Unmarshal(v.JSON, &text) != nil || json.Unmarshal([]byte(text), &d.Defaults) != nil {
				return Definition{}, invalidf("job definition %d: its default parameters are no JSON array of {name, values}", id)
			}
		}
	}
	if d.Kind == "" {
		return Definition{}, invalidf("job definition %d names no built-in job kind (attribute %d)", id, content.AttrJobKind)
	}
	return d, nil
}
