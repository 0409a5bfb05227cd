// The window's rendering of untrusted text matches the engine's (`sluice_core::text`): the same
// Unicode classes, the same ⟨U+202E⟩ form, tabs and newlines kept for multi-line text.
import { describe, expect, it } from "vitest";
import { visible } from "./format";

const hex = (c: string) => c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");

describe("visible", () => {
  it("shows every class of hidden character as its code point, by property", () => {
    const cases = [
      "\u001b", // ESC: terminal escapes
      "\u009b", // C1 CSI
      "\r",
      "\u202e", // bidi override
      "\u2067", // right-to-left isolate
      "\u061c", // Arabic letter mark
      "\u200b", // zero-width space
      "\u200d", // zero-width joiner
      "\u00ad", // soft hyphen
      "\ufeff", // byte order mark
      "\u180e", // Mongolian vowel separator (Cf)
      "\u2028", // line separator
      "\u2029", // paragraph separator
      "\ufe0f", // variation selector (default ignorable)
      "\u{e0100}", // variation selector supplement
      "\u3164", // Hangul filler
      "\u115f", // Hangul choseong filler
      "\u{e0041}", // tag letter A
      "\u{1d173}", // musical symbol begin beam (Cf)
      "\ue000", // private use
      "\u{10fffd}", // supplementary private use
      "\u0378", // unassigned
      "\ud800", // lone surrogate
    ];
    for (const c of cases) {
      expect(visible(`x${c}y`), `U+${hex(c)}`).toBe(`x⟨U+${hex(c)}⟩y`);
    }
  });

  it("keeps tabs, newlines, letters, marks, symbols and emoji", () => {
    for (const s of ["a\tb\nc", "café naïve", "日本語", "a\u0301", "€ → ✓", "😀", "\u3000"]) {
      expect(visible(s)).toBe(s);
    }
  });

  it("is idempotent: text the engine already escaped is shown as it is", () => {
    const once = visible("rm \u202e-rf\u2028x");
    expect(visible(once)).toBe(once);
  });
});
