// A placeholder for the object view (the engineer writing
// src/features/object replaces it): it shows the open object's id.
import type { Route } from "../../router";

export function ObjectSlot({ route }: { route: Route }) {
  return <p class="muted">{route.object}</p>;
}
