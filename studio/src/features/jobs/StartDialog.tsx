// The dialog that starts a built-in job: an export (JSON or CSV) of a type or
// of objects by id, an import of a JSON file (sent as job input, slice by
// slice), and for administrators a re-index or a clean-up of files. What the
// API refuses is shown in the dialog, in its words.
import { useEffect, useState } from "preact/hooks";
import { type KindName, parseIds, startable, startJob, type Job, type StartSpec, uploadInput } from "../../data/jobs";
import { loadTypes, type TypeInfo } from "../../data/types";
import { formatNumber, locale } from "../../i18n/i18n";
import { uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Dialog, problemText } from "../../ui/ui";
import { m } from "./messages";

export function StartDialog(p: { branch: number; admin: boolean; onClose: () => void; onStarted: (j: Job) => void }) {
  const l = useStore(locale);
  const kinds = startable(p.admin);
  const [kind, setKind] = useState<KindName>("exportJson");
  const [scope, setScope] = useState<"type" | "ids">("type");
  const [types, setTypes] = useState<TypeInfo[] | null>(null);
  const [type, setType] = useState("");
  const [ids, setIds] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [batch, setBatch] = useState("500");
  const [inPlace, setInPlace] = useState(true);
  const [dryRun, setDryRun] = useState(true);
  const [minAge, setMinAge] = useState("24h");
  const [problem, setProblem] = useState("");
  const [busy, setBusy] = useState<string | null>(null);
  useEffect(() => {
    const ac = new AbortController();
    loadTypes(String(p.branch), uiLanguages(l), ac.signal).then((ts) => {
      setTypes(ts);
      if (ts[0]) setType((cur) => cur || String(ts[0]?.id));
    }, (e) => !ac.signal.aborted && setProblem(problemText(e)));
    return () => ac.abort();
  }, [p.branch, l]);
  const exporting = kind === "exportJson" || kind === "exportCsv";

  const start = async () => {
    setProblem("");
    const spec: StartSpec = { kind, branch: p.branch, language: uiLanguages(l)[0] ?? 201 };
    if (exporting) {
      if (scope === "type") {
        if (!type) return setProblem(m("noType"));
        spec.type = type;
      } else {
        const parsed = parseIds(ids);
        if (parsed.bad.length > 0) return setProblem(m("idsBad", { list: parsed.bad.join(", ") }));
        if (parsed.tooMany) return setProblem(m("idsTooMany", { n: formatNumber(parsed.ids.length) }));
        if (parsed.ids.length === 0) return setProblem(m("idsNone"));
        spec.ids = parsed.ids;
      }
    }
    if (kind === "importJson") {
      if (!file) return setProblem(m("noFile"));
      const n = Number(batch);
      if (batch.trim() && Number.isInteger(n) && n > 0) spec.batchSize = n;
    }
    if (kind === "reindex" && inPlace) spec.reindexBranch = p.branch;
    if (kind === "cleanupFiles") {
      spec.dryRun = dryRun;
      if (minAge.trim()) spec.minAge = minAge.trim();
    }
    try {
      if (kind === "importJson" && file) {
        setBusy(m("sending", { n: 0 }));
        const token = await uploadInput(file, file.name, (sent) =>
          setBusy(m("sending", { n: formatNumber(file.size ? Math.floor((sent / file.size) * 100) : 100) })));
        spec.input = { token, name: file.name };
      }
      setBusy(m("starting"));
      const j = await startJob(spec);
      p.onStarted(j);
    } catch (e) {
      setProblem(problemText(e));
    } finally {
      setBusy(null);
    }
  };

  return (
    <Dialog title={m("startTitle")} onClose={p.onClose}
      footer={<>
        <Button onClick={p.onClose}>{m("cancel")}</Button>
        <Button variant="primary" disabled={busy !== null} onClick={() => void start()}>{busy ?? m("startNow")}</Button>
      </>}>
      <form class="job-form" onSubmit={(e) => { e.preventDefault(); void start(); }}>
        <fieldset class="job-kinds">
          <legend>{m("kind")}</legend>
          {kinds.map((k) => (
            <label key={k} class="job-kind">
              <input type="radio" name="job-kind" value={k} checked={kind === k} onChange={() => setKind(k)} />
              {m(`k_${k}`)}
            </label>
          ))}
          {!p.admin && <p class="muted job-hint">{m("adminsNote")}</p>}
        </fieldset>
        {exporting && (
          <fieldset class="job-scope">
            <legend>{m("what")}</legend>
            <label class="job-kind">
              <input type="radio" name="job-scope" checked={scope === "type"} onChange={() => setScope("type")} /> {m("ofType")}
            </label>
            {scope === "type" && (
              <label class="job-field">
                <span>{m("type")}</span>
                <select class="input" value={type} disabled={!types} onChange={(e) => setType(e.currentTarget.value)}>
                  {types?.map((t) => <option key={t.id} value={String(t.id)}>{t.name}</option>)}
                </select>
              </label>
            )}
            <label class="job-kind">
              <input type="radio" name="job-scope" checked={scope === "ids"} onChange={() => setScope("ids")} /> {m("ofSelection")}
            </label>
            {scope === "ids" && (
              <label class="job-field">
                <span>{m("ids")}</span>
                <textarea class="input mono" rows={4} value={ids} aria-describedby="job-ids-hint" onInput={(e) => setIds(e.currentTarget.value)} />
                <span id="job-ids-hint" class="muted job-hint">{m("idsHint")}</span>
              </label>
            )}
          </fieldset>
        )}
        {kind === "importJson" && (
          <>
            <label class="job-field">
              <span>{m("file")}</span>
              <input type="file" class="input" accept=".json,application/json" aria-describedby="job-file-hint"
                onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
              <span id="job-file-hint" class="muted job-hint">{m("fileHint")}</span>
            </label>
            <label class="job-field">
              <span>{m("batchSize")}</span>
              <input type="number" class="input" min={1} max={5000} value={batch} onInput={(e) => setBatch(e.currentTarget.value)} />
            </label>
          </>
        )}
        {kind === "reindex" && (
          <label class="job-kind">
            <input type="checkbox" checked={inPlace} onChange={(e) => setInPlace(e.currentTarget.checked)} /> {m("reindexScope")}
            {!inPlace && <span class="muted job-hint"> {m("reindexHint")}</span>}
          </label>
        )}
        {kind === "cleanupFiles" && (
          <>
            <label class="job-kind">
              <input type="checkbox" checked={dryRun} onChange={(e) => setDryRun(e.currentTarget.checked)} /> {m("dryRun")}
            </label>
            <label class="job-field">
              <span>{m("minAge")}</span>
              <input class="input mono" value={minAge} onInput={(e) => setMinAge(e.currentTarget.value)} />
            </label>
          </>
        )}
        {problem && <div class="problem" role="alert">{problem}</div>}
        <button type="submit" hidden />
      </form>
    </Dialog>
  );
}
