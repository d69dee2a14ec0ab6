// Export of the list's selection: starts the export job (JSON or CSV) with
// the selected objects' ids and links to it on the Jobs screen. The jobs
// module loads on demand, so the list's first load does not carry it.
import { useState } from "preact/hooks";
import { formatNumber } from "../../../i18n/i18n";
import { navigate } from "../../../router";
import { Button, Dialog, problemText } from "../../../ui/ui";
import { m } from "./messages";

export function ExportDialog(p: { branch: string; ids: number[]; name?: string | undefined; onClose: () => void }) {
  const [format, setFormat] = useState<"exportJson" | "exportCsv">("exportJson");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState("");
  const [job, setJob] = useState<number | null>(null);
  const title = p.ids.length === 1 && p.name ? m("exportTitleOne", { name: p.name }) : m("exportTitle", { n: formatNumber(p.ids.length) });
  const start = async () => {
    setBusy(true);
    setProblem("");
    try {
      const { startJob } = await import("../../../data/jobs");
      const j = await startJob({ kind: format, branch: Number(p.branch), ids: p.ids });
      setJob(j.id);
    } catch (e) {
      setProblem(problemText(e));
    } finally {
      setBusy(false);
    }
  };
  const open = () => {
    if (job === null) return;
    p.onClose();
    navigate({ branch: p.branch, section: "jobs", job: String(job), query: {} });
  };
  return (
    <Dialog title={title} onClose={p.onClose}
      footer={job === null ? <>
        <Button onClick={p.onClose}>{m("cancel")}</Button>
        <Button variant="primary" disabled={busy} onClick={() => void start()}>{m("startExport")}</Button>
      </> : <>
        <Button onClick={p.onClose}>{m("close")}</Button>
        <Button variant="primary" onClick={open}>{m("openJob", { id: job })}</Button>
      </>}>
      {job === null ? (
        <>
          <p>{m("exportText")}</p>
          <label class="toolbar-field">
            <span>{m("format")}</span>
            <select class="input" value={format} onChange={(e) => setFormat(e.currentTarget.value as "exportJson" | "exportCsv")}>
              <option value="exportJson">JSON</option>
              <option value="exportCsv">CSV</option>
            </select>
          </label>
        </>
      ) : (
        <p role="status">
          {m("exportStarted", { id: job })}{" "}
          <a href={`/studio/b/${encodeURIComponent(p.branch)}/jobs/${job}`} onClick={(e) => { e.preventDefault(); open(); }}>{m("openJob", { id: job })}</a>
        </p>
      )}
      {problem && <div class="problem" role="alert">{problem}</div>}
    </Dialog>
  );
}
