import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import * as messages from "../src/messages";

/**
 * The plugin's author reads French: every text of its UI is French (src/messages.ts). This
 * reads the text of every string of src/ (not the comments) and fails on one that reads as an
 * English sentence: it holds an English word no French text uses (`the`, `is`, `with`…), once
 * what it quotes as code (`grasbot serve`, `visibility: public`) is set apart. A single word
 * ("Opening") cannot be told from a key or an identifier, and is not caught.
 */
const ENGLISH = new Set(
	(
		"the and of to is are was were not with for from this that these those your you be been has have had will would can cannot " +
		"could should must it its by at into when which what no any all only than then there their them they does did do if in " +
		"but so too more other each every without about after before until while here off set " +
		// words of the plugin's own English UI that French says otherwise
		"daemon vault visitor visitors reload reloaded preview suggested dismiss whole opening settings setting error refused unusable " +
		"required delay connection unavailable streaming"
	).split(" "),
);

const SRC = path.join(__dirname, "..", "src");

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const full = path.join(dir, entry.name);
		if (entry.isDirectory()) return sources(full);
		return entry.name.endsWith(".ts") ? [full] : [];
	});
}

/** The text of each string literal and template part of a file, with its line. */
function strings(file: string): { line: number; text: string }[] {
	const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
	const found: { line: number; text: string }[] = [];
	const visit = (node: ts.Node) => {
		if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
			found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.text });
		}
		node.forEachChild(visit);
	};
	visit(source);
	return found;
}

/** The English words of a text, what it quotes as code set apart. */
export function englishWords(text: string): string[] {
	const prose = text.replace(/`[^`]*`/g, " ");
	if (!/\s/.test(prose.trim())) return [];
	// words of letters alone: `1be6` (a code point) holds no word `be`
	return prose
		.toLowerCase()
		.split(/[^\p{L}\p{N}']+/u)
		.filter((word) => /^[\p{L}']+$/u.test(word) && ENGLISH.has(word));
}

describe("the plugin's texts", () => {
	it("tells an English sentence from a French one", () => {
		expect(englishWords("Reload the daemon's vault a moment after you save a note.")).toEqual(["reload", "the", "vault", "after", "you"]);
		expect(englishWords("Recharger le coffre du démon peu après l'enregistrement d'une note.")).toEqual([]);
		expect(englishWords("Tu as posé cette question il y a un an.")).toEqual([]);
		expect(englishWords("Lancez-le avec `grasbot serve --token-file the-file`.")).toEqual([]);
		expect(englishWords("application/json")).toEqual([]);
	});

	it("are all French, in every source file", () => {
		const english = sources(SRC).flatMap((file) =>
			strings(file)
				.filter(({ text }) => englishWords(text).length > 0)
				.map(({ line, text }) => `${path.relative(SRC, file)}:${line}: ${text}`),
		);
		expect(english).toEqual([]);
	});

	it("are in sentence case", () => {
		const names = Object.values(messages.SETTING_NAMES);
		for (const text of [...names, ...Object.values(messages.COMMANDS)]) {
			// a capital first, then none but in a name (GrasBot) or a code span
			expect(text.replace(/GrasBot|`[^`]*`/g, "").slice(1)).toBe(text.replace(/GrasBot|`[^`]*`/g, "").slice(1).toLowerCase());
			expect(text[0]).toBe(text[0].toUpperCase());
		}
	});
});
