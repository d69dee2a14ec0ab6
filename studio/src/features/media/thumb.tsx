// A file's thumbnail in the media library.
import { useEffect, useRef, useState } from "preact/hooks";
import { isImage, type MediaItem, thumbnail } from "../../data/media";

/**
 * Thumb is a file's thumbnail, fetched (with the token, as a blob: URL) only
 * once its card scrolls into view; files that are no image show their extension.
 */
export function Thumb(p: { branch: string; item: MediaItem; size: number }) {
  const ref = useRef<HTMLSpanElement>(null);
  const [seen, setSeen] = useState(false);
  const [url, setUrl] = useState<string | null | undefined>(undefined);
  const image = isImage(p.item.extension);
  useEffect(() => {
    const el = ref.current;
    if (!el || !image) return;
    if (typeof IntersectionObserver === "undefined") {
      setSeen(true);
      return;
    }
    const io = new IntersectionObserver((es) => {
      if (es.some((e) => e.isIntersecting)) {
        setSeen(true);
        io.disconnect();
      }
    }, { rootMargin: "200px" });
    io.observe(el);
    return () => io.disconnect();
  }, [image]);
  useEffect(() => {
    if (!seen) return;
    const ac = new AbortController();
    let made: string | null = null;
    thumbnail(p.branch, p.item.id, p.size, ac.signal).then((u) => {
      made = u;
      setUrl(u);
    }, () => setUrl(null));
    return () => {
      ac.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [seen, p.branch, p.item.id, p.item.md5, p.size]);
  return (
    <span ref={ref} class="media-thumb" data-loaded={url ? "true" : seen ? "loading" : "false"}>
      {url ? <img src={url} alt="" /> : <span class="media-thumb-none" aria-hidden="true">{image && url === undefined ? "" : p.item.extension.replace(".", "").toUpperCase() || "?"}</span>}
    </span>
  );
}
