package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

func init() {
	addStudioJourney("delete", studioDeleteJourney)
}

// objectDeleted reads whether object id is deleted on branch (Management, meta.deleted).
func objectDeleted(t *testing.T, base string, branch, id int64) bool {
	t.Helper()
	b := mustCall(t, http.StatusOK, http.MethodGet, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects/%d", base, branch, id), "")
	var o struct {
		Meta struct {
			Deleted bool `json:"deleted"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("read object %d: %v: %s", id, err, b)
	}
	return o.Meta.Deleted
}

// studioDeleteJourney: the open object is deleted and restored from the
// object editor. Delete is not offered while edits are unsaved; it asks
// first; deleted, the object says so, shows its values read-only (no
// Save) and offers Restore; restored, it is editable again and a save is
// stored. The API holds the deletion and the restore.
func studioDeleteJourney(t *testing.T, s *studioSetup) {
	branch := createBranch(t, s.base, "Delete work")
	typeID, objID, teaser := setupTeaserModel(t, s.base, branch, "deleteWork", "deleteNote", "Note", "Doomed note", "Keep me")
	p := s.page(t, "editor")
	p.login()
	p.open(fmt.Sprintf("/studio/b/%d/content/%d/%d", branch, typeID, objID))
	p.waitValue(teaser, 201, "Keep me")
	input := fmt.Sprintf("document.getElementById(%q)", cellID(teaser, 201))

	// Unsaved edits first: Delete waits until they are saved or discarded.
	p.fill("Teaser (en-US)", "Unsaved")
	p.waitFor("Delete disabled with unsaved edits", fmt.Sprintf(`%s?.disabled === true && %s.title.includes("Save or discard")`, button("Delete"), button("Delete")))
	p.click("Discard changes")
	p.waitFor("Delete enabled", fmt.Sprintf(`%s?.disabled === false && %s.value === "Keep me"`, button("Delete"), input))

	if got := studioEval[string](p, string(button("Delete"))+`.getAttribute("aria-label")`); got != "Delete Doomed note" {
		t.Errorf("the object's Delete is named %q, want it named after the object", got)
	}
	p.click("Delete Doomed note")
	p.waitFor("Delete asks first", `(document.querySelector("dialog[open]")?.innerText ?? "").includes("Delete “Doomed note”?")`)
	p.shot("delete-question")
	p.checkAccessibility("the delete question")
	if objectDeleted(t, s.base, branch, objID) {
		t.Fatal("the object is deleted before the question was answered")
	}
	p.step("answer Delete", studioWait, clickCSS("dialog[open] .btn-danger"))
	p.waitFor("the object says it is deleted", fmt.Sprintf(`(document.querySelector(".notice.object-deleted")?.innerText ?? "").includes("This object is deleted") && document.body.innerText.includes("Restore it to change it.") && %s.disabled && !![...document.querySelectorAll("button")].find(b => b.textContent === "Restore") && ![...document.querySelectorAll("button")].some(b => b.textContent === "Save" || b.textContent === "Delete") && !document.querySelector("dialog[open]")`, input))
	if !objectDeleted(t, s.base, branch, objID) {
		t.Error("the API does not hold the deletion")
	}
	p.shot("deleted")
	p.checkAccessibility("a deleted object")

	p.click("Restore Doomed note")
	p.waitFor("restored: editable again", fmt.Sprintf(`!document.querySelector(".notice.object-deleted") && !%s.disabled && !!%s`, input, button("Save")))
	if objectDeleted(t, s.base, branch, objID) {
		t.Error("the API still holds the object as deleted after Restore")
	}
	p.fill("Teaser (en-US)", "Back again")
	p.click("Save")
	p.waitBadge(teaser, 201, "local", "Set here")
	p.waitFor("saved", `!document.body.innerText.includes("Unsaved changes")`)
	if v := localValues(t, s.base, branch, objID)[fmt.Sprintf("%d/201", teaser)]; v != "Back again" {
		t.Errorf("the teaser saved after the restore = %v", v)
	}
	p.shot("restored")
}
