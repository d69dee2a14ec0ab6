// Builds the studio into services/internal/studio/dist, which the binary
// embeds and which is committed (CI rebuilds it and fails on drift):
//   dist/index.html          the page; no inline script or style (strict CSP)
//   dist/assets/*-HASH.js    the entry and its lazily loaded chunks (ES modules)
//   dist/assets/*-HASH.css   the styles
//   dist/manifest.json       what the first load needs (entry, its static
//                            imports, CSS): the budget test and the server read it
// The output depends only on the sources and the locked esbuild version.
import * as esbuild from "esbuild";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "..", "services", "internal", "studio", "dist");
const assets = join(dist, "assets");

rmSync(dist, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });

const result = await esbuild.build({
  absWorkingDir: here,
  entryPoints: ["src/main.tsx"],
  outdir: assets,
  bundle: true,
  splitting: true,
  format: "esm",
  target: "es2022",
  minify: true,
  sourcemap: false,
  legalComments: "none",
  metafile: true,
  entryNames: "[name]-[hash]",
  chunkNames: "chunk-[hash]",
  assetNames: "[name]-[hash]",
  jsx: "automatic",
  jsxImportSource: "preact",
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "warning",
});

const outputs = result.metafile.outputs;
const name = (p) => relative(dist, join(here, p)).split("\\").join("/");
const entry = Object.keys(outputs).find((p) => outputs[p].entryPoint === "src/main.tsx");
if (!entry) throw new Error("no entry output");
// The first load: the entry, what it imports statically (transitively), and its CSS.
const initial = new Set();
const visit = (p) => {
  if (initial.has(p)) return;
  initial.add(p);
  for (const imp of outputs[p].imports ?? []) if (imp.kind === "import-statement" && outputs[imp.path]) visit(imp.path);
};
visit(entry);
const css = outputs[entry].cssBundle;
const initialJS = [...initial].map(name).sort();
const initialCSS = css ? [name(css)] : [];
const lazy = Object.keys(outputs).map(name).filter((p) => !initialJS.includes(p) && !initialCSS.includes(p)).sort();

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>CMS Studio</title>
${initialCSS.map((c) => `<link rel="stylesheet" href="/studio/${c}">`).join("\n")}
${initialJS.filter((j) => j !== name(entry)).map((j) => `<link rel="modulepreload" href="/studio/${j}">`).join("\n")}
<script type="module" src="/studio/${name(entry)}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The studio needs JavaScript.</noscript>
</body>
</html>
`.replace(/\n\n+/g, "\n");
writeFileSync(join(dist, "index.html"), html);
writeFileSync(join(dist, "manifest.json"), JSON.stringify({ entry: name(entry), initial: [...initialJS, ...initialCSS], lazy }, null, 2) + "\n");
console.log(`studio: ${initialJS.length + initialCSS.length} files on first load, ${lazy.length} lazy, into ${relative(process.cwd(), dist)}`);
