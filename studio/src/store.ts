// A small observable value and the hook that renders from it: the studio's
// shared state (session, route, language, toasts) without a framework.
import { useEffect, useRef, useState } from "preact/hooks";

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

/**
 * useStore renders the component again whenever the store changes. The
 * subscription starts after the first render (an effect), so a change made
 * in between (an answer arriving while a lazily loaded screen mounts) is
 * caught by comparing with the value rendered, not missed for good.
 */
export function useStore<T>(store: Store<T>): T {
  const [, force] = useState(0);
  const value = store.get();
  const rendered = useRef(value);
  rendered.current = value;
  useEffect(() => {
    const unsubscribe = store.subscribe(() => force((n) => n + 1));
    if (!Object.is(store.get(), rendered.current)) force((n) => n + 1);
    return unsubscribe;
  }, [store]);
  return value;
}
