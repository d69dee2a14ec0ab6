// The XmlRef.SimpleHtml input, registered lazily: its code (ProseMirror)
// is a chunk of its own, fetched the first time such a field is shown.
// Its styles are in fields.css (a lazy chunk's CSS would not be loaded).
import "./fields.css";
import { registerField } from "./registry";

registerField((dt) => dt === "XmlRef.SimpleHtml", () => import("./richtext-editor").then((mod) => mod.RichTextField));
