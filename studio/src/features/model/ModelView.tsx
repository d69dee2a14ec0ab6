// The model: the branch's types and their attributes.
import type { Route } from "../../router";
import { messages } from "../../i18n/i18n";
import { Shell } from "../../shell/Shell";
import { TypeNav, useTypes } from "../content/ContentView";
import { Pane } from "../../ui/ui";

const m = messages({
  en: { model: "Model", choose: "Choose a type to see its attributes." },
  de: { model: "Modell", choose: "Wählen Sie einen Typ, um seine Attribute zu sehen." },
});

export function ModelView({ route: r }: { route: Route }) {
  const { types, error } = useTypes(r.branch);
  return (
    <Shell nav={<TypeNav route={r} types={types} error={error} />}>
      <Pane title={m("model")}>
        <p class="muted">{m("choose")}</p>
      </Pane>
    </Shell>
  );
}
