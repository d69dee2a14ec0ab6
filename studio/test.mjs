// Runs the studio's unit tests (src/**/*.test.ts): type-checks the sources
// (tsc, strict), bundles each test with esbuild and runs them with Node's
// test runner. `make test` calls it.
import * as esbuild from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const tests = readdirSync(join(here, "src"), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith(".test.ts") || f.endsWith(".test.tsx"))
  .map((f) => join("src", f))
  .sort();

execFileSync(process.execPath, [join(here, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "-p", here], { stdio: "inherit" });
console.log("studio: tsc --strict: no errors");

const out = mkdtempSync(join(tmpdir(), "studio-test-"));
try {
  await esbuild.build({
    absWorkingDir: here,
    entryPoints: tests,
    outdir: out,
    outbase: "src",
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    jsx: "automatic",
    jsxImportSource: "preact",
    outExtension: { ".js": ".mjs" },
    logLevel: "warning",
  });
  const files = tests.map((t) => join(out, t.replace(/^src[\\/]/, "").replace(/\.tsx?$/, ".mjs")));
  execFileSync(process.execPath, ["--test", "--test-reporter=spec", ...files], { stdio: "inherit" });
} finally {
  rmSync(out, { recursive: true, force: true });
}
