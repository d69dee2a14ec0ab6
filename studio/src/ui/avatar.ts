// A person's initials for their avatar: the first letter of the first and
// of the last word of the display name ("Carla Berger" → "CB"), one letter
// for a one-word name, "?" for none.
export function initials(name: string): string {
  const words = name.trim().split(/[\s._@-]+/).filter(Boolean);
  const first = words[0];
  if (!first) return "?";
  const last = words.length > 1 ? words[words.length - 1] : undefined;
  const letter = (w: string) => [...w][0]?.toLocaleUpperCase() ?? "";
  return letter(first) + (last ? letter(last) : "");
}
