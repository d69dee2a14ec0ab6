package content

import (
	"slices"
	"strconv"
	"strings"
)

// The protection of the system model (docs/api-reference.md §9.2,
// "Protected system objects"). The whole system reads the bootstrapped
// objects (IsSystemObject) by id: the data type, multiplicity, language
// dependence and target types of the system attributes decide how every
// value is validated and stored, the system types' forms and display
// attributes how Delivery, the index and the code generator see them, the
// media types' names how files are served. So no write changes them:
//
//   - the root 0, the system types, the system attributes and the media
//     types are read-only: no value of theirs can be written (not even an
//     unchanged one, nor a name in another language), and one without an
//     ApiIdentifier cannot get one;
//   - the languages (type 20) keep their ISO code (2001; clients address
//     them by it) but may be renamed (1000) and get another fallback
//     (2002): both are configuration of an installation;
//   - the default branch 4 may be renamed (1000) and carry the workflow
//     values every branch carries (4001-4004); it has no parent (4000).
//
// Deleting any system object is refused as well (DeleteObjects). The
// ApiIdentifier of an object that has one never changes (update).

// systemConfigurable lists, per system object that has them, the
// attributes whose values a write may change.
func systemConfigurable(id int64) []int64 {
	switch {
	case id == BranchDefault:
		return []int64{AttrName, AttrBranchType, AttrBranchWorkflowState, AttrBranchDueDate, AttrBranchAssignedTo}
	case slices.ContainsFunc(sysLanguages, func(l sysLanguage) bool { return l.id == id }):
		return []int64{AttrName, AttrFallbackLanguage}
	}
	return nil
}

// checkProtected refuses (ErrInvalid, naming the object) a write of o to
// object id (whose ApiIdentifier is curAPI) when id is a system object and
// o writes what may not change. The one rule of every write path: update
// serves UpdateObjects and UpdateBranch on every branch; a create cannot
// address an existing object (ids are allocated, GUIDs and ApiIdentifiers
// unique).
func checkProtected(id int64, curAPI string, o ObjectInput) error {
	if !isSystemID(id) {
		return nil
	}
	if o.APIIdentifier != nil && *o.APIIdentifier != "" && curAPI == "" {
		return invalidf("object %d is a protected system object: it cannot get an apiIdentifier", id)
	}
	allowed := systemConfigurable(id)
	for _, val := range o.Values {
		if slices.Contains(allowed, val.Attribute) {
			continue
		}
		if len(allowed) == 0 {
			return invalidf("object %d is a protected system object: its values cannot change", id)
		}
		names := make([]string, len(allowed))
		for i, a := range allowed {
			names[i] = strconv.FormatInt(a, 10)
		}
		return invalidf("object %d is a protected system object: attribute %d cannot change (only %s may)",
			id, val.Attribute, strings.Join(names, ", "))
	}
	return nil
}
