// Why the model cannot be changed here: no write grant on the branch (the
// model view and a type's pane say it above their content), in the
// studio's read-only notice with the model's wording.
import { messages } from "../../i18n/i18n";
import { ReadOnlyNotice } from "../object/ReadOnlyNotice";

const m = messages({
  en: { readOnly: "Read only: you may read the model of this branch but not change it (you have no write permission there)." },
  de: { readOnly: "Nur lesen: Sie dürfen das Modell dieses Branches lesen, aber nicht ändern (Sie haben dort keine Schreibberechtigung)." },
});

export function ModelReadOnly() {
  return <ReadOnlyNotice>{m("readOnly")}</ReadOnlyNotice>;
}
