// The reference input's texts (English and German).
import { messages } from "../../../i18n/i18n";

export const m = messages({
  en: {
    loading: "Loading…", missing: "Object #{id} does not exist (any more)", deleted: "deleted", none: "No object chosen.",
    noneList: "No objects chosen.", choose: "Choose…", change: "Change…", changeNamed: "Change {field}", remove: "Remove",
    removeNamed: "Remove {name}", up: "Move up", down: "Move down", upNamed: "Move {name} up",
    downNamed: "Move {name} down", notRef: "Not an object id: {v}",
    pickTitle: "Choose {field}", search: "Search", searchHint: "Words of the name or text, or an id like #123",
    results: "Results", noResults: "No matching objects.", recent: "Recently changed", found: "{n} found", more: "More than {n}: type more to narrow down.",
    chosen: "already chosen", createNew: "Create new…", back: "Back to the search", createTitle: "Create a new object",
    type: "Type", name: "Name", create: "Create and choose", creating: "Creating…", cancel: "Cancel", nameRequired: "Give it a name.",
    anyType: "Any type", loadingTypes: "Loading types…", hint: "↑ ↓ to move, Enter to choose, Esc to close",
  },
  de: {
    loading: "Wird geladen…", missing: "Objekt #{id} existiert nicht (mehr)", deleted: "gelöscht", none: "Kein Objekt gewählt.",
    noneList: "Keine Objekte gewählt.", choose: "Wählen…", change: "Ändern…", changeNamed: "{field} ändern", remove: "Entfernen",
    removeNamed: "{name} entfernen", up: "Nach oben", down: "Nach unten", upNamed: "{name} nach oben",
    downNamed: "{name} nach unten", notRef: "Keine Objekt-ID: {v}",
    pickTitle: "{field} wählen", search: "Suche", searchHint: "Wörter aus Name oder Text, oder eine ID wie #123",
    results: "Ergebnisse", noResults: "Keine passenden Objekte.", recent: "Zuletzt geändert", found: "{n} gefunden", more: "Mehr als {n}: schränken Sie die Suche ein.",
    chosen: "bereits gewählt", createNew: "Neu anlegen…", back: "Zurück zur Suche", createTitle: "Neues Objekt anlegen",
    type: "Typ", name: "Name", create: "Anlegen und wählen", creating: "Wird angelegt…", cancel: "Abbrechen", nameRequired: "Geben Sie einen Namen an.",
    anyType: "Beliebiger Typ", loadingTypes: "Typen werden geladen…", hint: "↑ ↓ zum Bewegen, Eingabe zum Wählen, Esc zum Schließen",
  },
});
