package content

import (
	"fmt"

	"github.com/cmsplatform/cms/pkg/model"
)

// Well-known ids of the NovaDB system model (docs/api-reference.md §9).
const (
	RootID        int64 = 0                   // the meta-type: the type of all types (virtual)
	BranchDefault       = model.BranchDefault // branchDefault: root of the branch tree

	TypeAttribute     int64 = 10
	TypeLanguage      int64 = 20
	TypeUnit          int64 = 30
	TypeUnitGroup     int64 = 31
	TypeBranch        int64 = 40
	TypeForm          int64 = 50
	TypeWorkflowState int64 = 80
	// TypeUser holds users (display name 1000, user name AttrUserName). Its
	// NovaDB id is undocumented; 110 is our choice in a free core slot.
	TypeUser       int64 = 110
	TypeBranchType int64 = 180

	AttrName                      = model.AttrName
	AttrDataType            int64 = 1001
	AttrVariantAxis         int64 = 1002
	AttrUnit                int64 = 1003
	AttrAllowMultiple       int64 = 1004
	AttrReferencedTypes     int64 = 1015
	AttrLanguageDependent   int64 = 1017
	AttrApiIdentifier       int64 = 1021
	AttrIsoLanguageCode     int64 = 2001
	AttrFallbackLanguage          = model.AttrFallbackLanguage
	AttrUnitParentGroup     int64 = 3002
	AttrBranchParent              = model.AttrBranchParent
	AttrBranchType          int64 = 4001
	AttrBranchWorkflowState int64 = 4002
	AttrBranchDueDate       int64 = 4003
	AttrBranchAssignedTo    int64 = 4004
	// The presentation attributes of the meta-model: an attribute's icon,
	// a type's forms and the attributes naming and picturing its objects,
	// a form's content.
	AttrIcon            int64 = 1016
	AttrTypeCreateForm  int64 = 5001
	AttrTypeDetailForms int64 = 5002
	AttrTypeDisplayName       = model.AttrTypeDisplayName
	AttrTypeDisplayIcon int64 = 5006
	AttrFormContent     int64 = 5053
	// AttrUserName is the login name of a TypeUser object (our choice, like
	// TypeUser). Compared without case; see security.go on duplicates.
	AttrUserName int64 = 1100
	// The security attributes of users (our choice; see accounts.go). Only
	// administrators write them.
	//
	// AttrUserPassword is write-only: a client sends the password in plain
	// text, the service stores only its bcrypt hash and never returns the
	// attribute from any read.
	AttrUserPassword = model.AttrUserPassword
	// AttrUserAdmin (Boolean): the user may do everything.
	AttrUserAdmin int64 = 1102
	// AttrUserInternal (Boolean): the user may act for another user with
	// X-CmsApi-Username (internal access).
	AttrUserInternal int64 = 1103
	// AttrUserReadBranches (ObjRef to branches, multi-valued): branches the
	// user may read, each with its descendants.
	AttrUserReadBranches int64 = 1104
	// AttrUserWriteBranches (ObjRef to branches, multi-valued): branches the
	// user may write (and read), each with its descendants.
	AttrUserWriteBranches int64 = 1105
	// AttrUserTokenGeneration (Integer): raised by a logout
	// (RevokeTokens); with the password hash it makes the user's
	// credential stamp, so raising it revokes every bearer token of the
	// user (pkg/auth token.go).
	AttrUserTokenGeneration int64 = 1106
	// AttrUserTokenSessions (String): the user's bearer-token session
	// record (pkg/auth session.go), written by renewals and emptied by a
	// logout; never read by clients (a secret attribute) and written by
	// administrators only.
	AttrUserTokenSessions = model.AttrUserTokenSessions

	LanguageEnUS int64 = 201
	LanguageDeDE int64 = 202
)

// Data type names, the values of attribute 1001 (docs/api-reference.md §10).
var dataTypes = map[string]valueKind{
	"String": kindString, "TextRef": kindString, "TextRef.JavaScript": kindString, "TextRef.CSS": kindString,
	"String.DataType": kindDataType, "String.InheritanceBehavior": kindString, "String.UserName": kindString,
	"String.RGBColor": kindString,
	"Integer":         kindInteger, "Decimal": kindNumber, "Float": kindNumber, "Boolean": kindBool,
	"DateTime": kindDateTime, "DateTime.Date": kindDate,
	"ObjRef": kindRef, "BinRef": kindRef, "BinRef.Icon": kindRef, "BinRef.Thumbnail": kindRef,
	"XmlRef.SimpleHtml": kindXHTML, "XmlRef.VisualDocument": kindXHTML,
}

// sysType is a bootstrapped type.
type sysType struct {
	id  int64
	api string
}

// sysTypes are the core types (typeRef 0).
var sysTypes = []sysType{
	{10, "typeAttribute"}, {11, "typeAttributeGroup"}, {12, "typeAttributeMainGroup"}, {20, "typeLanguage"},
	{30, "typeUnit"}, {31, "typeUnitGroup"}, {40, "typeBranch"}, {50, "typeForm"}, {60, "typeApplicationArea"},
	{70, "typeUiString"}, {80, "typeWorkflowState"}, {90, "typeKanbanBoard"}, {100, "typeMediaType"},
	{110, "typeUser"}, {120, "typeJobDefinition"}, {130, "typePackage"}, {140, "typeTreeDefinition"},
	{150, "typeRazorView"}, {155, "typeParameter"}, {160, "typeTriggerDefinition"}, {161, "typeTimerDefinition"},
	{170, "typeScriptedCondition"}, {171, "typeObjectReferenceValueCondition"}, {172, "typeUserNameValueCondition"},
	{173, "typeStringValueCondition"}, {174, "typeNumericValueCondition"}, {175, "typeTimestampValueCondition"},
	{176, "typeBooleanValueCondition"}, {180, "typeBranchType"}, {190, "typePresentationAs"},
	{200, "typeExternalApi"}, {210, "typeWebHookDefinition"},
	{300, "typeParagraphStyle"}, {301, "typeCascadingStyleSheet"}, {302, "typeTextAlignment"},
	{303, "typeFontFamily"}, {304, "typeFontFace"},
	{400, "typeVisualComponentDefinition"}, {401, "typeVisualComponentDefinitionGroup"},
	{402, "typeVisualComponentType"},
}

// sysAttr is a bootstrapped attribute definition.
type sysAttr struct {
	id       int64
	api      string // "" = none documented
	name     string
	dataType string
	multi    bool
	langDep  bool
	refTypes []int64 // allowed target types of references (1015)
}

// sysAttrs are the system attributes of docs/api-reference.md §9.3 and §9.1.
var sysAttrs = []sysAttr{
	{id: 1000, api: "attributeName", name: "Name", dataType: "String", langDep: true},
	{id: 1001, api: "attributeDataType", name: "Data type", dataType: "String.DataType"},
	{id: 1002, name: "Variant axis", dataType: "ObjRef"},
	{id: 1003, name: "Unit", dataType: "ObjRef", refTypes: []int64{TypeUnit}},
	{id: 1004, api: "attributeAllowMultiple", name: "Allow multiple values", dataType: "Boolean"},
	{id: 1005, name: "Sortable values", dataType: "Boolean"},
	{id: 1006, api: "attributePredefined", name: "Predefined", dataType: "Boolean"},
	{id: 1007, name: "Format string", dataType: "String"},
	{id: 1008, api: "attributeValidationCode", name: "Validation code", dataType: "TextRef.JavaScript"},
	{id: 1009, name: "Virtualization code", dataType: "TextRef.JavaScript"},
	{id: 1010, name: "Search filter", dataType: "Boolean"},
	{id: 1011, name: "List column", dataType: "Boolean"},
	{id: 1012, api: "attributeDescription", name: "Description", dataType: "TextRef", langDep: true},
	{id: 1013, api: "attributeInheritanceBehavior", name: "Inheritance behavior", dataType: "String.InheritanceBehavior"},
	{id: 1014, name: "Maximum number of values", dataType: "Integer"},
	{id: 1015, api: "attributeReferencedObjectTypes", name: "Referenced object types", dataType: "ObjRef", multi: true, refTypes: []int64{RootID}},
	{id: AttrIcon, api: "attributeIcon", name: "Icon", dataType: "BinRef.Icon"},
	{id: 1017, api: "attributeLanguageDependent", name: "Language dependent", dataType: "Boolean"},
	{id: 1018, api: "attributeRequired", name: "Required", dataType: "Boolean"},
	{id: 1019, api: "attributeParentGroup", name: "Parent group", dataType: "ObjRef", refTypes: []int64{11}},
	{id: 1020, api: "attributeVirtual", name: "Virtual", dataType: "Boolean"},
	{id: 1021, api: "attributeApiIdentifier", name: "API identifier", dataType: "String"},
	{id: 1023, name: "Sortable children", dataType: "Boolean"},
	{id: 1028, name: "No spell check", dataType: "Boolean"},
	{id: 1032, api: "attributeUniqueValues", name: "Unique values", dataType: "Boolean"},
	{id: 1051, name: "Name of the reverse relation", dataType: "String", langDep: true},
	{id: AttrUserName, api: "attributeUserName", name: "User name", dataType: "String.UserName"},
	{id: AttrUserPassword, api: "userPassword", name: "Password", dataType: "String"},
	{id: AttrUserAdmin, api: "userAdmin", name: "Administrator", dataType: "Boolean"},
	{id: AttrUserInternal, api: "userInternalAccess", name: "Internal access", dataType: "Boolean"},
	{id: AttrUserReadBranches, api: "userReadBranches", name: "Read branches", dataType: "ObjRef", multi: true, refTypes: []int64{TypeBranch}},
	{id: AttrUserWriteBranches, api: "userWriteBranches", name: "Write branches", dataType: "ObjRef", multi: true, refTypes: []int64{TypeBranch}},
	{id: AttrUserTokenGeneration, api: "userTokenGeneration", name: "Token generation", dataType: "Integer"},
	{id: AttrUserTokenSessions, api: "userTokenSessions", name: "Token sessions", dataType: "String"},
	{id: 2001, api: "attributeIsoLanguageCode", name: "ISO language code", dataType: "String"},
	{id: 2002, api: "attributeFallbackLanguage", name: "Fallback language", dataType: "ObjRef", refTypes: []int64{TypeLanguage}},
	{id: 3001, api: "unitGroupBaseUnit", name: "Base unit", dataType: "ObjRef", refTypes: []int64{TypeUnit}},
	{id: 3002, api: "unitParentGroup", name: "Unit group", dataType: "ObjRef", refTypes: []int64{31}},
	{id: 3003, api: "unitSymbol", name: "Symbol", dataType: "String"},
	{id: 3005, api: "unitBaseFactor", name: "Base factor", dataType: "Decimal"},
	{id: 4000, api: "branchParent", name: "Parent branch", dataType: "ObjRef", refTypes: []int64{TypeBranch}},
	{id: 4001, api: "branchType", name: "Branch type", dataType: "ObjRef", refTypes: []int64{TypeBranchType}},
	{id: 4002, api: "branchWorkflowState", name: "Workflow state", dataType: "ObjRef", refTypes: []int64{TypeWorkflowState}},
	{id: 4003, api: "branchDueDate", name: "Due date", dataType: "DateTime.Date"},
	{id: 4004, api: "branchAssignedTo", name: "Assigned to", dataType: "String.UserName"},
	{id: AttrTypeCreateForm, api: "objectTypeCreateForm", name: "Create form", dataType: "ObjRef", refTypes: []int64{TypeForm}},
	{id: AttrTypeDetailForms, api: "objectTypeDetailForms", name: "Detail forms", dataType: "ObjRef", multi: true, refTypes: []int64{TypeForm}},
	{id: AttrTypeDisplayName, api: "objectTypeDisplayNameAttribute", name: "Display name attribute", dataType: "ObjRef", refTypes: []int64{TypeAttribute}},
	{id: AttrTypeDisplayIcon, api: "objectTypeDisplayIconAttribute", name: "Display icon attribute", dataType: "ObjRef", refTypes: []int64{TypeAttribute}},
	{id: 5008, api: "objectTypeThumbnailAttribute", name: "Thumbnail attribute", dataType: "ObjRef", refTypes: []int64{TypeAttribute}},
	{id: 5009, api: "objectTypeBinaryProxy", name: "Binary proxy", dataType: "Boolean"},
	{id: AttrFormContent, api: "formContent", name: "Form content", dataType: "ObjRef", multi: true, refTypes: []int64{TypeAttribute}},
	{id: 5054, name: "Form condition attribute", dataType: "ObjRef", refTypes: []int64{TypeAttribute}},
	{id: 5055, name: "Form conditions", dataType: "ObjRef", multi: true},
	{id: 5056, name: "Single editor", dataType: "Boolean"},
	{id: 6001, api: "applicationAreaObjectTypes", name: "Object types", dataType: "ObjRef", multi: true, refTypes: []int64{RootID}},
	{id: 6003, api: "applicationAreaSortKey", name: "Sort key", dataType: "Integer"},
	{id: AttrJobKind, api: "jobDefinitionKind", name: "Job kind", dataType: "String"},
	{id: AttrJobParameters, api: "jobDefinitionParameters", name: "Job default parameters", dataType: "TextRef"},
	{id: AttrWebHookURL, api: "webHookUrl", name: "Webhook URL", dataType: "String"},
	{id: AttrWebHookSecret, api: "webHookSecret", name: "Webhook secret", dataType: "String"},
	{id: AttrWebHookBranches, api: "webHookBranches", name: "Webhook branches", dataType: "ObjRef", multi: true, refTypes: []int64{TypeBranch}},
	{id: AttrWebHookTypes, api: "webHookTypes", name: "Webhook object types", dataType: "ObjRef", multi: true, refTypes: []int64{RootID}},
	{id: AttrWebHookKinds, api: "webHookKinds", name: "Webhook event kinds", dataType: "String", multi: true},
	{id: AttrWebHookEnabled, api: "webHookEnabled", name: "Webhook enabled", dataType: "Boolean"},
	// The styling attributes (types 300-304; pkg/stylesheets builds the
	// Rendering stylesheets from them). NovaDB documents the types, not
	// their attributes: ids and ApiIdentifiers are our choice.
	{id: AttrFontFamilyName, api: "fontFamilyName", name: "CSS font family name", dataType: "String"},
	{id: AttrFontFamilyGeneric, api: "fontFamilyGeneric", name: "Generic fallback family", dataType: "String"},
	{id: AttrFontFaceFamily, api: "fontFaceFamily", name: "Font family", dataType: "ObjRef", refTypes: []int64{TypeFontFamily}},
	{id: AttrFontFaceFile, api: "fontFaceFile", name: "Font file", dataType: "BinRef"},
	{id: AttrFontFaceWeight, api: "fontFaceWeight", name: "Font weight", dataType: "Integer"},
	{id: AttrFontFaceStyle, api: "fontFaceStyle", name: "Font style", dataType: "String"},
	{id: AttrTextAlignmentValue, api: "textAlignmentValue", name: "CSS text-align value", dataType: "String"},
	{id: AttrParagraphStyleFontFamily, api: "paragraphStyleFontFamily", name: "Font family", dataType: "ObjRef", refTypes: []int64{TypeFontFamily}},
	{id: AttrParagraphStyleFontSize, api: "paragraphStyleFontSize", name: "Font size (pt)", dataType: "Decimal"},
	{id: AttrParagraphStyleLineHeight, api: "paragraphStyleLineHeight", name: "Line height", dataType: "Decimal"},
	{id: AttrParagraphStyleColor, api: "paragraphStyleColor", name: "Text colour", dataType: "String.RGBColor"},
	{id: AttrParagraphStyleTextAlignment, api: "paragraphStyleTextAlignment", name: "Text alignment", dataType: "ObjRef", refTypes: []int64{TypeTextAlignment}},
	{id: AttrParagraphStyleFontWeight, api: "paragraphStyleFontWeight", name: "Font weight", dataType: "Integer"},
	{id: AttrParagraphStyleItalic, api: "paragraphStyleItalic", name: "Italic", dataType: "Boolean"},
	{id: AttrStyleSheetSource, api: "styleSheetSource", name: "Stylesheet source", dataType: "TextRef.CSS"},
	// A template object's (type 150) text; see docs/rendering.md, Templates.
	{id: AttrTemplateSource, api: "attributeTemplateSource", name: "Template source", dataType: "TextRef"},
	// A binary proxy object's file (pkg/files): the content's MD5 in GUID
	// form and the extension with its dot; Delivery renders them under
	// these ApiIdentifiers, so a site builds files/{md5}{ext}.
	{id: 11000, api: "externalBinaryMD5", name: "File hash", dataType: "String"},
	{id: 11005, api: "externalBinaryFileExtension", name: "File extension", dataType: "String"},
	// The other file props of NovaDB's Delivery answers (ids our choice):
	// a client may store the file name as uploaded; Delivery derives what
	// a BPO does not store (model.DeriveBinaryProps).
	{id: model.AttrFileName, api: "externalBinaryFileName", name: "File name", dataType: "String"},
	{id: model.AttrFileMediaType, api: "externalBinaryMediaType", name: "Media type", dataType: "ObjRef", refTypes: []int64{model.TypeMediaType}},
	{id: model.AttrFileThumbnail, api: "externalBinaryThumbnail", name: "Thumbnail", dataType: "BinRef.Thumbnail"},
}

// sysLanguage is a bootstrapped language.
type sysLanguage struct {
	id       int64
	api, iso string
	nameEn   string
	fallback int64
}

// TypeJobDefinition holds job definitions (pkg/jobs). The built-in ones
// are bootstrapped below; a user's own definition names a built-in one in
// AttrJobKind and may carry default parameters in AttrJobParameters.
const (
	TypeJobDefinition int64 = 120
	// AttrJobKind (String): the ApiIdentifier of the built-in definition
	// a user's job definition runs.
	AttrJobKind int64 = 1210
	// AttrJobParameters (TextRef): default parameters as a JSON array of
	// {"name": ..., "values": [...]}; a job's own parameters win.
	AttrJobParameters int64 = 1211
)

// TypeWebHookDefinition holds webhook definitions (pkg/webhooks): each
// object of the type is one receiver of the change feed. The attributes are
// our choice (NovaDB documents the type, not its attributes).
const (
	TypeWebHookDefinition int64 = 210
	// AttrWebHookURL (String): the http(s) URL events are POSTed to.
	AttrWebHookURL int64 = 1220
	// AttrWebHookSecret (String): the HMAC-SHA256 key of the signature
	// header. Secret: written by administrators only, never returned by a
	// read, never indexed.
	AttrWebHookSecret = model.AttrWebHookSecret
	// AttrWebHookBranches (ObjRef to branches, multi-valued): only events
	// of these branches; none = every branch.
	AttrWebHookBranches int64 = 1222
	// AttrWebHookTypes (ObjRef to types, multi-valued): only events
	// touching objects of these types; none = every type.
	AttrWebHookTypes int64 = 1223
	// AttrWebHookKinds (String, multi-valued): only events of these kinds
	// ("created", "updated", "deleted", ...); none = every kind.
	AttrWebHookKinds int64 = 1224
	// AttrWebHookEnabled (Boolean): deliveries happen only while true.
	AttrWebHookEnabled int64 = 1225
)

// The styling types (CONVENTIONS §7.2) and their attributes (our choice;
// see docs/rendering.md, Stylesheets).
const (
	TypeParagraphStyle      int64 = 300
	TypeCascadingStyleSheet int64 = 301
	TypeTextAlignment       int64 = 302
	TypeFontFamily          int64 = 303
	TypeFontFace            int64 = 304

	AttrFontFamilyName              int64 = 1260 // String: the CSS family name
	AttrFontFamilyGeneric           int64 = 1261 // String: serif, sans-serif, monospace, ...
	AttrFontFaceFamily              int64 = 1262 // ObjRef → TypeFontFamily
	AttrFontFaceFile                int64 = 1263 // BinRef → a binary proxy object (the font file)
	AttrFontFaceWeight              int64 = 1264 // Integer 1..1000
	AttrFontFaceStyle               int64 = 1265 // String: normal, italic, oblique
	AttrTextAlignmentValue          int64 = 1266 // String: left, right, center, justify, start, end
	AttrParagraphStyleFontFamily    int64 = 1267 // ObjRef → TypeFontFamily
	AttrParagraphStyleFontSize      int64 = 1268 // Decimal, points
	AttrParagraphStyleLineHeight    int64 = 1269 // Decimal, a multiple of the font size
	AttrParagraphStyleColor         int64 = 1270 // String.RGBColor
	AttrParagraphStyleTextAlignment int64 = 1271 // ObjRef → TypeTextAlignment
	AttrParagraphStyleFontWeight    int64 = 1272 // Integer 1..1000
	AttrParagraphStyleItalic        int64 = 1273 // Boolean
	AttrStyleSheetSource            int64 = 1274 // TextRef.CSS: a TypeCascadingStyleSheet's CSS
)

// Templates (issue 17): a template is an object of TypeRazorView
// (CONVENTIONS §7) whose text is its AttrTemplateSource. NovaDB documents
// the type, not this attribute: its id and ApiIdentifier are our choice,
// 1280 leaving 1275-1279 to the styling attributes.
const (
	TypeRazorView      int64 = 150
	AttrTemplateSource int64 = 1280 // TextRef: the template text (Go html/template syntax)
)

// sysJobDefinition is a bootstrapped built-in job definition.
type sysJobDefinition struct {
	id        int64
	api, name string
}

// sysJobDefinitions are the built-in job definitions; pkg/jobs runs them
// by ApiIdentifier.
var sysJobDefinitions = []sysJobDefinition{
	{1200, "jobExportJson", "Export objects as JSON"},
	{1201, "jobExportCsv", "Export objects as CSV"},
	{1202, "jobImportJson", "Import objects from JSON"},
	{1203, "jobReindex", "Rebuild the search index"},
	{1204, "jobCleanupFiles", "Remove unreferenced files"},
	{1205, "jobPromoteRelease", "Promote a release branch"},
}

var sysLanguages = []sysLanguage{
	{LanguageEnUS, "languageEnglishUS", "en-US", "English (United States)", 0},
	{LanguageDeDE, "languageGermanGermany", "de-DE", "German (Germany)", LanguageEnUS},
}

// systemGUID is the fixed GUID of a system object.
func systemGUID(id int64) string {
	return fmt.Sprintf("00000000-0000-0000-0000-%012x", id)
}

// IsSystemObject reports whether id is an object of the system model
// (bootstrapped and protected): the core types, attributes, languages,
// media types and the default branch. Every other type is a custom type.
// None can be deleted; which of their values may change is protect.go's
// rule.
func IsSystemObject(id int64) bool { return isSystemID(id) }

// isSystemID reports whether id is a bootstrapped (protected) object.
func isSystemID(id int64) bool {
	_, ok := systemIDs[id]
	return ok
}

// systemIDs is the set of bootstrapped ids, root included.
var systemIDs = func() map[int64]struct{} {
	m := map[int64]struct{}{RootID: {}, BranchDefault: {}}
	for _, t := range sysTypes {
		m[t.id] = struct{}{}
	}
	for _, a := range sysAttrs {
		m[a.id] = struct{}{}
	}
	for _, l := range sysLanguages {
		m[l.id] = struct{}{}
	}
	for _, t := range model.MediaTypes {
		m[t.ID] = struct{}{}
	}
	return m
}()
