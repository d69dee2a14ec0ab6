// The media library's words, English and German.
import { messages } from "../../i18n/i18n";

export const m = messages({
  en: {
    media: "Media", mediaType: "Media type", noTypes: "This branch has no media type yet: a type marked as binary proxy (5009) holds files.",
    drop: "Drop files here to upload them, several at once,", choose: "Choose files", filesToUpload: "Files to upload",
    uploads: "Uploads", progress: "Upload of {name}", bytes: "{done} of {total}",
    st_queued: "Waiting", st_uploading: "Uploading", st_paused: "Paused", st_reconnecting: "Connection lost, trying again…", st_done: "Uploaded", st_failed: "Failed",
    pause: "Pause", resume: "Resume", cancel: "Cancel", dismiss: "Dismiss",
    pauseNamed: "Pause {name}", resumeNamed: "Resume {name}", cancelNamed: "Cancel {name}", dismissNamed: "Dismiss {name}",
    duplicate: "The same content is already stored: nothing new was stored for {name}.",
    createObject: "Create object", createNamed: "Create object for {name}", created: "Created {name}.", open: "Open",
    replacing: "Replaces the file of {name}", replaced: "The file of {name} was replaced.",
    search: "Search by name", fileType: "File type", allTypes: "All file types", more: "Show more", none: "No files match.", empty: "No files yet: drop some above.",
    noThumb: "no preview",
    details: "File", close: "Close", fileName: "File name", extension: "Extension", content: "Content (MD5)", download: "Download",
    downloadNamed: "Download {name}", replace: "Replace file", replaceNamed: "Replace file of {name}",
    whereUsed: "Where used", notUsed: "No object refers to this file.", usedVia: "through {attributes}", loading: "Loading…",
    announceDone: "{name} uploaded.", announceFailed: "Upload of {name} failed.",
  },
  de: {
    media: "Medien", mediaType: "Medientyp", noTypes: "Dieser Branch hat noch keinen Medientyp: Ein als Binär-Proxy (5009) markierter Typ hält Dateien.",
    drop: "Dateien hier ablegen, um sie hochzuladen, auch mehrere auf einmal,", choose: "Dateien auswählen", filesToUpload: "Hochzuladende Dateien",
    uploads: "Uploads", progress: "Upload von {name}", bytes: "{done} von {total}",
    st_queued: "Wartet", st_uploading: "Wird hochgeladen", st_paused: "Angehalten", st_reconnecting: "Verbindung verloren, neuer Versuch…", st_done: "Hochgeladen", st_failed: "Fehlgeschlagen",
    pause: "Anhalten", resume: "Fortsetzen", cancel: "Abbrechen", dismiss: "Ausblenden",
    pauseNamed: "{name} anhalten", resumeNamed: "{name} fortsetzen", cancelNamed: "{name} abbrechen", dismissNamed: "{name} ausblenden",
    duplicate: "Derselbe Inhalt ist bereits gespeichert: Für {name} wurde nichts Neues gespeichert.",
    createObject: "Objekt anlegen", createNamed: "Objekt anlegen für {name}", created: "{name} angelegt.", open: "Öffnen",
    replacing: "Ersetzt die Datei von {name}", replaced: "Die Datei von {name} wurde ersetzt.",
    search: "Nach Namen suchen", fileType: "Dateityp", allTypes: "Alle Dateitypen", more: "Mehr anzeigen", none: "Keine passenden Dateien.", empty: "Noch keine Dateien: Legen Sie oben welche ab.",
    noThumb: "keine Vorschau",
    details: "Datei", close: "Schließen", fileName: "Dateiname", extension: "Endung", content: "Inhalt (MD5)", download: "Herunterladen",
    downloadNamed: "{name} herunterladen", replace: "Datei ersetzen", replaceNamed: "Datei ersetzen: {name}",
    whereUsed: "Verwendet in", notUsed: "Kein Objekt verweist auf diese Datei.", usedVia: "über {attributes}", loading: "Wird geladen…",
    announceDone: "{name} hochgeladen.", announceFailed: "Upload von {name} fehlgeschlagen.",
  },
});

/** formatBytes writes a size in B, KB, MB or GB (decimal, as file managers do). */
export function formatBytes(n: number, num: (n: number, digits: number) => string): string {
  if (n < 1000) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${num(v, v < 10 ? 1 : 0)} ${units[u]}`;
}
