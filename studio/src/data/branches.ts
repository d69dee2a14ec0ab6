// The branch tree (Management GET /branches with names and parents).
import type { CmsObject } from "../api/generated/management";
import { api } from "../auth/session";
import { attr, displayName } from "./values";

export interface BranchNode {
  id: number;
  name: string;
  apiIdentifier?: string | undefined;
  parent?: number | undefined;
  depth: number;
  children: BranchNode[];
}

/** tree orders branches parent first, children by name; depth counts from the root. */
export function tree(objs: CmsObject[], preferred: readonly number[]): BranchNode[] {
  const nodes = new Map<number, BranchNode>();
  for (const o of objs) {
    const id = o.meta?.id;
    if (id === undefined) continue;
    const p = (o.values ?? []).find((v) => v.attribute === attr.branchParent)?.value;
    nodes.set(id, { id, name: displayName(o, preferred), apiIdentifier: o.meta?.apiIdentifier, parent: typeof p === "number" ? p : undefined, depth: 0, children: [] });
  }
  const roots: BranchNode[] = [];
  for (const n of nodes.values()) {
    const p = n.parent !== undefined ? nodes.get(n.parent) : undefined;
    if (p && p !== n) p.children.push(n);
    else roots.push(n);
  }
  const out: BranchNode[] = [];
  const walk = (ns: BranchNode[], depth: number, seen: Set<number>) => {
    ns.sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
    for (const n of ns) {
      if (seen.has(n.id)) continue;
      seen.add(n.id);
      n.depth = depth;
      out.push(n);
      walk(n.children, depth + 1, seen);
    }
  };
  walk(roots, 0, new Set());
  return out;
}

export async function loadBranches(preferred: readonly number[], signal?: AbortSignal): Promise<BranchNode[]> {
  const all: CmsObject[] = [];
  let next: string | undefined;
  for (let page = 0; page < 20; page++) {
    const { data } = await api.call("management", "GetBranches", { take: 1000, attributes: "1000,4000", continue: next }, undefined, { signal });
    all.push(...(data.objects ?? []));
    next = data.continue || undefined;
    if (!next) break;
  }
  return tree(all, preferred);
}
