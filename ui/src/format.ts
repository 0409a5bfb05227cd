// Text helpers. Everything from the engine is shown as text; characters that could disguise
// it are made visible as their code point (⟨U+202E⟩), never interpreted.

// The same classes as the engine's `sluice_core::text` (from Unicode's properties, not a list):
// controls, format characters, line and paragraph separators, default-ignorable code points,
// bidi controls, private-use and unassigned code points, lone surrogates. Tabs and newlines stay: multi-line text
// (snippets, logs) is shown as lines.
const DECEPTIVE =
  /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]/gu;

export function visible(s: string): string {
  return s.replace(DECEPTIVE, (c) => {
    const hex = c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    return `⟨U+${hex}⟩`;
  });
}

export function exactTime(ms: number): string {
  return new Date(ms).toLocaleString();
}

/** The local clock time ("14:03:27") on the day of `now`, the full local time on another day. */
export function clockTime(ms: number, now: number = Date.now()): string {
  const d = new Date(ms);
  return d.toDateString() === new Date(now).toDateString() ? d.toLocaleTimeString() : exactTime(ms);
}

/** "3 min ago", "in 29 days"; `now` is injectable for tests. */
export function relativeTime(ms: number, now: number = Date.now()): string {
  const diff = ms - now;
  const abs = Math.abs(diff);
  const units: [number, Intl.RelativeTimeFormatUnit][] = [
    [86_400_000, "day"],
    [3_600_000, "hour"],
    [60_000, "minute"],
  ];
  const fmt = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  for (const [size, unit] of units) {
    if (abs >= size) return fmt.format(Math.round(diff / size), unit);
  }
  return "just now";
}

/** "512 B", "2.1 KB", "340 MB" (powers of 1024, one decimal below 10). */
export function humanBytes(n: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const shown = u === 0 || v >= 10 ? Math.round(v).toString() : v.toFixed(1);
  return `${shown} ${units[u]}`;
}
