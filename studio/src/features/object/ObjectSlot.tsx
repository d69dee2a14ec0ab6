// The object editor in the content section: ContentView renders it when the
// address names an object.
import type { Route } from "../../router";
import { ObjectView } from "./ObjectView";

export function ObjectSlot({ route }: { route: Route }) {
  return <ObjectView key={`${route.branch}/${route.type}/${route.object}`} route={route} />;
}
