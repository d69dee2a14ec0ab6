// The data types in words: a label and a short explanation each, in
// English and German, for the picker and the attribute table.
import type { DataType } from "../../data/model";
import { messages } from "../../i18n/i18n";

const m = messages({
  en: {
    String: "Text", "String.help": "A line of text: titles, names, codes.",
    TextRef: "Long text", "TextRef.help": "Plain text of several lines or paragraphs.",
    "XmlRef.SimpleHtml": "Rich text", "XmlRef.SimpleHtml.help": "Formatted text (XHTML): headings, lists, links.",
    Integer: "Whole number", "Integer.help": "Counts and quantities: 0, 12, -3.",
    Decimal: "Decimal", "Decimal.help": "Exact decimal numbers: prices, measures.",
    Float: "Floating point", "Float.help": "Approximate numbers for measurements and calculations.",
    Boolean: "Yes / no", "Boolean.help": "A switch: on or off.",
    DateTime: "Date and time", "DateTime.help": "A moment in time (stored in UTC).",
    "DateTime.Date": "Date", "DateTime.Date.help": "A calendar day without a time.",
    ObjRef: "Reference", "ObjRef.help": "Links to other objects, of the types you choose.",
    BinRef: "File", "BinRef.help": "An uploaded file: an image, a PDF, a video.",
  },
  de: {
    String: "Text", "String.help": "Eine Textzeile: Titel, Namen, Codes.",
    TextRef: "Langtext", "TextRef.help": "Unformatierter Text über mehrere Zeilen oder Absätze.",
    "XmlRef.SimpleHtml": "Formatierter Text", "XmlRef.SimpleHtml.help": "Text mit Formatierung (XHTML): Überschriften, Listen, Links.",
    Integer: "Ganzzahl", "Integer.help": "Anzahlen und Mengen: 0, 12, -3.",
    Decimal: "Dezimalzahl", "Decimal.help": "Exakte Dezimalzahlen: Preise, Maße.",
    Float: "Gleitkommazahl", "Float.help": "Näherungswerte für Messungen und Berechnungen.",
    Boolean: "Ja / Nein", "Boolean.help": "Ein Schalter: an oder aus.",
    DateTime: "Datum und Uhrzeit", "DateTime.help": "Ein Zeitpunkt (gespeichert in UTC).",
    "DateTime.Date": "Datum", "DateTime.Date.help": "Ein Kalendertag ohne Uhrzeit.",
    ObjRef: "Verweis", "ObjRef.help": "Verweise auf andere Objekte der Typen, die Sie wählen.",
    BinRef: "Datei", "BinRef.help": "Eine hochgeladene Datei: Bild, PDF, Video.",
  },
});

type Key = Parameters<typeof m>[0];

/** dataTypeLabel is a data type's name in words; an unknown one (a system type's) as the API names it. */
export function dataTypeLabel(dt: string): string {
  return dt in labelsKnown ? m(dt as Key) : dt;
}

export function dataTypeHelp(dt: DataType): string {
  return m(`${dt}.help` as Key);
}

const labelsKnown: Record<string, true> = {
  String: true, TextRef: true, "XmlRef.SimpleHtml": true, Integer: true, Decimal: true, Float: true, Boolean: true,
  DateTime: true, "DateTime.Date": true, ObjRef: true, BinRef: true,
};
