// The subpath that opens a source's note at the passage's own section (headingLink.ts).
import { describe, expect, it } from "vitest";
import { headingSubpath } from "../src/headingLink";
import { stripHeadingForLink } from "./obsidian-stub";

describe("headingSubpath", () => {
	it("names every heading above the passage, outermost first: a section's name another part of the note shares is told apart by its parents", () => {
		expect(headingSubpath(["Linux", "Installation"], stripHeadingForLink)).toBe("#Linux#Installation");
		expect(headingSubpath(["Windows", "Installation"], stripHeadingForLink)).toBe("#Windows#Installation");
	});

	it("writes each heading as Obsidian links it: a # inside a heading does not split it", () => {
		expect(headingSubpath(["Langages", "C# et .NET"], stripHeadingForLink)).toBe("#Langages#C et .NET");
		expect(headingSubpath(["Suivi", "Issue #12 | [[bug]]"], stripHeadingForLink)).toBe("#Suivi#Issue 12 bug");
	});

	it("leaves out a heading with nothing a link can hold, and gives none for a passage without heading", () => {
		expect(headingSubpath(["Notes", "#", "Détails"], stripHeadingForLink)).toBe("#Notes#Détails");
		expect(headingSubpath(["::"], stripHeadingForLink)).toBe("");
		expect(headingSubpath([], stripHeadingForLink)).toBe("");
	});
});
