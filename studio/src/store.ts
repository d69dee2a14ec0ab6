// A small observable value and the hook that renders from it: the studio's
// shared state (session, route, language, toasts) without a framework.
import { useEffect, useState } from "preact/hooks";

export interface Store<T> {
  get(): T;
  set(next: T): void;
  update(f: (v: T) => T): void;
  subscribe(listener: (v: T) => void): () => void;
}

export function createStore<T>(initial: T): Store<T> {
  let value = initial;
  const listeners = new Set<(v: T) => void>();
  return {
    get: () => value,
    set(next) {
      if (Object.is(next, value)) return;
      value = next;
      listeners.forEach((l) => l(value));
    },
    update(f) {
      this.set(f(value));
    },
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
}

/** useStore renders the component again whenever the store changes. */
export function useStore<T>(store: Store<T>): T {
  const [, force] = useState(0);
  useEffect(() => store.subscribe(() => force((n) => n + 1)), [store]);
  return store.get();
}
