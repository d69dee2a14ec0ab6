// A reader of the Prometheus text exposition format (version 0.0.4), as
// every process serves it on /metrics: enough of it for the Operations
// view to pick the few cms_* series it shows. Comments (# HELP, # TYPE)
// are skipped; a sample line is `name{label="value",…} value [timestamp]`,
// label values escaped with \\, \" and \n. A line that is none of these is
// an error: the view says the metrics are unreadable rather than showing
// numbers it misread.

/** maxMetricsChars bounds the text parsed (a process serves some 100 kB; 4 MiB is far beyond any). */
export const maxMetricsChars = 4 << 20;

/** Sample is one line of a metric: its name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export class MetricsFormatError extends Error {
  constructor(line: number, why: string) {
    super(`metrics line ${line}: ${why}`);
    this.name = "MetricsFormatError";
  }
}

const nameRE = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const labelNameRE = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** parseMetrics reads the samples of a /metrics text; keep (by metric name) drops the others early. */
export function parseMetrics(text: string, keep: (name: string) => boolean = () => true): Sample[] {
  if (text.length > maxMetricsChars) throw new MetricsFormatError(0, `longer than ${maxMetricsChars} characters`);
  const out: Sample[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim();
    if (line === "" || line.startsWith("#")) continue;
    const name = nameRE.exec(line)?.[0];
    if (!name) throw new MetricsFormatError(i + 1, "no metric name");
    if (!keep(name)) continue;
    let rest = line.slice(name.length);
    const labels: Record<string, string> = {};
    if (rest.startsWith("{")) {
      rest = readLabels(rest.slice(1), labels, i + 1);
    }
    const fields = rest.trim().split(/\s+/);
    if (fields.length < 1 || fields.length > 2 || fields[0] === "") throw new MetricsFormatError(i + 1, "want a value and at most a timestamp");
    out.push({ name, labels, value: parseValue(fields[0] ?? "", i + 1) });
  }
  return out;
}

/** readLabels reads `a="x",b="y"}` into labels and returns what follows the brace. */
function readLabels(s: string, labels: Record<string, string>, line: number): string {
  let rest = s;
  for (;;) {
    rest = rest.trimStart();
    if (rest.startsWith("}")) return rest.slice(1);
    const name = labelNameRE.exec(rest)?.[0];
    if (!name) throw new MetricsFormatError(line, "bad label name");
    rest = rest.slice(name.length).trimStart();
    if (!rest.startsWith('="')) throw new MetricsFormatError(line, `label ${name} has no quoted value`);
    rest = rest.slice(2);
    let value = "";
    let j = 0;
    for (; j < rest.length && rest[j] !== '"'; j++) {
      if (rest[j] === "\\") {
        j++;
        const c = rest[j];
        value += c === "n" ? "\n" : c === "\\" ? "\\" : c === '"' ? '"' : "\\" + (c ?? "");
      } else value += rest[j];
    }
    if (j >= rest.length) throw new MetricsFormatError(line, `label ${name} is not closed`);
    labels[name] = value;
    rest = rest.slice(j + 1).trimStart();
    if (rest.startsWith(",")) rest = rest.slice(1);
    else if (!rest.startsWith("}")) throw new MetricsFormatError(line, "want , or } after a label");
  }
}

function parseValue(s: string, line: number): number {
  if (s === "NaN") return NaN;
  if (s === "+Inf" || s === "Inf") return Infinity;
  if (s === "-Inf") return -Infinity;
  const v = Number(s);
  if (Number.isNaN(v)) throw new MetricsFormatError(line, `value ${JSON.stringify(s)} is no number`);
  return v;
}

/** sum adds the values of the samples named name whose labels match all of match; undefined when there is none. */
export function sum(samples: readonly Sample[], name: string, match: (labels: Record<string, string>) => boolean = () => true): number | undefined {
  let total: number | undefined;
  for (const s of samples) if (s.name === name && match(s.labels)) total = (total ?? 0) + s.value;
  return total;
}
