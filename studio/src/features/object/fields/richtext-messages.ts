// The rich-text editor's texts (English and German).
import { messages } from "../../../i18n/i18n";

export const m = messages({
  en: {
    toolbar: "Formatting of {field}", textStyle: "Text style", paragraph: "Paragraph", heading: "Heading {n}",
    bold: "Bold", italic: "Italic", code: "Code", link: "Link", bullets: "Bulleted list", numbers: "Numbered list",
    quote: "Quote", undo: "Undo", redo: "Redo", addLink: "Add link", editLink: "Edit link", url: "Address (URL)",
    urlHint: "https://…, mailto:… or a path on this site such as /about", badUrl: "This is no address the site can link to: use https://, http://, mailto: or a path, without spaces or special characters.",
    removeLink: "Remove link", cancel: "Cancel", apply: "Apply", loading: "Loading the editor…",
    lossy: "This text contains parts the editor cannot show (for example tables or images). They are removed when you change the text.",
  },
  de: {
    toolbar: "Formatierung von {field}", textStyle: "Absatzformat", paragraph: "Absatz", heading: "Überschrift {n}",
    bold: "Fett", italic: "Kursiv", code: "Code", link: "Link", bullets: "Aufzählung", numbers: "Nummerierte Liste",
    quote: "Zitat", undo: "Rückgängig", redo: "Wiederholen", addLink: "Link einfügen", editLink: "Link bearbeiten", url: "Adresse (URL)",
    urlHint: "https://…, mailto:… oder ein Pfad dieser Site wie /ueber-uns", badUrl: "Auf diese Adresse kann die Site nicht verlinken: verwenden Sie https://, http://, mailto: oder einen Pfad, ohne Leer- und Sonderzeichen.",
    removeLink: "Link entfernen", cancel: "Abbrechen", apply: "Übernehmen", loading: "Der Editor wird geladen…",
    lossy: "Dieser Text enthält Teile, die der Editor nicht anzeigen kann (etwa Tabellen oder Bilder). Sie werden entfernt, wenn Sie den Text ändern.",
  },
});
