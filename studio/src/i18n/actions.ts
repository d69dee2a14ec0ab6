// The wording of actions every feature shares, so that one action reads
// the same everywhere: an add button says "Add" ("Hinzufügen"), and its
// accessible name says what it adds or where to.
import { messages } from "./i18n";

export const actions = messages({
  en: { add: "Add", addThing: "Add {thing}", addTo: "Add to {field}" },
  de: { add: "Hinzufügen", addThing: "{thing} hinzufügen", addTo: "Zu {field} hinzufügen" },
});
