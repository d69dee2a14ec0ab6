package indexdoc

// Layout is where an installation's index documents live and which
// per-language fields they hold. The writer (pkg/indexwriter) and every
// reader (Delivery, the Index group, branch resolution) must use the same
// Layout, so that they name the same indexes and fields.
type Layout struct {
	// IndexPrefix is put before ObjectsIndex, CommentsIndex and the state
	// indexes (lower case, e.g. "cms-"); the engine may add its own prefix
	// as well.
	IndexPrefix string
	// Languages get per-language display-name fields (NameField …),
	// filled along each language's fallback chain; nil means
	// DefaultLanguages.
	Languages []int64
}

// Langs returns Languages, or DefaultLanguages when it is nil.
func (l Layout) Langs() []int64 {
	if l.Languages == nil {
		return DefaultLanguages
	}
	return l.Languages
}
