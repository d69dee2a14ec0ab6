// The generated models of a branch's types as files (docs/codegen.md):
// CodeGenerator_GetCSharpClasses with language csharp or typescript, every
// custom type with an ApiIdentifier. The answer is the source as a JSON
// string (the client asks for JSON); the studio saves it as a file.
import { api } from "../auth/session";

export type CodeLanguage = "csharp" | "typescript";
export const codeLanguages: readonly CodeLanguage[] = ["csharp", "typescript"];

/** codeFileName is the file a branch's models are saved as: "models-<branch>.cs" / ".ts", the branch's name made safe. */
export function codeFileName(branch: string, language: CodeLanguage): string {
  const safe = branch.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "") || "branch";
  return `models-${safe}.${language === "csharp" ? "cs" : "ts"}`;
}

/** codeMediaType is the file's media type. */
export function codeMediaType(language: CodeLanguage): string {
  return language === "csharp" ? "text/x-csharp;charset=utf-8" : "text/typescript;charset=utf-8";
}

/** loadModels reads the generated source of every custom type of branch. */
export async function loadModels(branch: string, language: CodeLanguage, signal?: AbortSignal): Promise<string> {
  const { data } = await api.call("management", "GetCSharpClasses", { branch, language }, undefined, { signal });
  if (typeof data !== "string") throw new Error("the code generator answered no source");
  return data;
}

/** saveFile hands text to the browser as a download named name. */
export function saveFile(name: string, text: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.rel = "noopener";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
