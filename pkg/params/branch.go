package params

// DraftBranch is the alias of the default branch: NovaDB clients document
// every branch parameter as "branch ID or draft", draft meaning branch 4.
// A branch object whose ApiIdentifier is "draft" takes precedence, so
// resolvers apply BranchAlias only after their lookup found no branch.
const DraftBranch = "draft"

// DefaultBranch is the id of the default branch, the root of every
// branch tree.
const DefaultBranch int64 = 4

// BranchAlias returns the branch an identifier that matched no branch
// object stands for: DraftBranch is DefaultBranch. ok is false for every
// other identifier.
func BranchAlias(ident string) (id int64, ok bool) {
	if ident == DraftBranch {
		return DefaultBranch, true
	}
	return 0, false
}
