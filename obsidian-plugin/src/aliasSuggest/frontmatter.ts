/**
 * Where a note's `aliases` sit in its frontmatter, read from the raw document text.
 *
 * The editor widgets need positions (where to draw, which aliases the author already typed),
 * which Obsidian's parsed frontmatter does not give. This reads only the small YAML subset
 * aliases are written in (a block list, a flow list, a single string); adding an alias goes
 * through Obsidian's own YAML round trip (`addAlias` with `processFrontMatter`).
 */

import { COMBINING } from "../combining";

export type AliasesKind =
	/** `aliases:` followed by `- item` lines */
	| "block"
	/** `aliases: [a, b]`, possibly over several lines */
	| "flow"
	/** `aliases: a single string` */
	| "scalar"
	/** `aliases:` with nothing, `null` or `~` */
	| "empty"
	/** a frontmatter without an `aliases` key */
	| "missing"
	/** no frontmatter at all */
	| "none";

export interface AliasesLocation {
	kind: AliasesKind;
	/** The aliases written in the document, unquoted. */
	values: string[];
	/** Start of the `aliases:` line (the closing fence for "missing", 0 for "none"). */
	from: number;
	/** End of the last line that belongs to the key (same as `from` for "missing" and "none"). */
	to: number;
	/** End of the `aliases:` key line: where the suggestions are drawn. */
	keyLineEnd: number;
	/** Start of the closing fence line, or -1 without frontmatter. */
	closingFence: number;
}

interface Line {
	from: number;
	to: number;
	text: string;
}

// Obsidian opens and closes properties with `---` alone (its help: « triple dashes at the start
// and end »); YAML's and pandoc's closing `...` closes nothing there, as in the daemon
const FENCE = /^---[ \t]*$/;
// Obsidian reads a property whatever the case of its key (`Aliases:`), the first one written
const KEY = /^aliases[ \t]*:(?=[ \t]|$)(.*)$/i;
const TOP_LEVEL_KEY = /^[^\s#-]/;
const ITEM = /^[ \t]*-(?:[ \t]+(.*))?$/;

function splitLines(text: string, max: number): Line[] {
	const lines: Line[] = [];
	let from = 0;
	while (from <= text.length && lines.length < max) {
		const nl = text.indexOf("\n", from);
		const end = nl === -1 ? text.length : nl;
		const content = text.slice(from, end).replace(/\r$/, "");
		lines.push({ from, to: from + content.length, text: content });
		if (nl === -1) break;
		from = nl + 1;
	}
	return lines;
}

/** Length of the frontmatter block (both fences included), 0 when the text has none. */
export function frontmatterLength(text: string, maxLines = 5000): number {
	const lines = splitLines(text, maxLines);
	if (lines.length === 0 || !FENCE.test(lines[0].text)) return 0;
	for (let i = 1; i < lines.length; i++) {
		if (FENCE.test(lines[i].text)) return lines[i].to;
	}
	return 0;
}

/** Drops a trailing ` # comment` outside quotes. */
function stripComment(value: string): string {
	let quote = "";
	for (let i = 0; i < value.length; i++) {
		const c = value[i];
		if (quote) {
			if (c === quote) quote = "";
		} else if (c === '"' || c === "'") {
			quote = c;
		} else if (c === "#" && (i === 0 || /\s/.test(value[i - 1]))) {
			return value.slice(0, i);
		}
	}
	return value;
}

/** A YAML scalar as written (plain, 'single' or "double" quoted), unquoted. */
export function unquote(raw: string): string {
	const value = raw.trim();
	if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1).replace(/''/g, "'");
	if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
		try {
			return JSON.parse(value) as string;
		} catch {
			return value.slice(1, -1);
		}
	}
	return value;
}

/** The items of a flow list's inside (`a, "b, c", 'd'`), split on commas outside quotes. */
function flowItems(inside: string): string[] {
	const items: string[] = [];
	let quote = "";
	let current = "";
	for (const c of inside) {
		if (quote) {
			if (c === quote) quote = "";
			current += c;
		} else if (c === '"' || c === "'") {
			quote = c;
			current += c;
		} else if (c === ",") {
			items.push(current);
			current = "";
		} else {
			current += c;
		}
	}
	items.push(current);
	return items.map(unquote).filter((item) => item.length > 0);
}

function isNull(value: string): boolean {
	return value === "" || value === "~" || value === "null" || value === "Null" || value === "NULL";
}

/** Finds the `aliases` key of the frontmatter at the start of `text`. */
export function locateAliases(text: string): AliasesLocation {
	const end = frontmatterLength(text);
	if (end === 0) return { kind: "none", values: [], from: 0, to: 0, keyLineEnd: 0, closingFence: -1 };
	const lines = splitLines(text.slice(0, end), Number.POSITIVE_INFINITY);
	const closing = lines[lines.length - 1];
	const body = lines.slice(1, -1);
	const keyIndex = body.findIndex((line) => KEY.test(line.text));
	if (keyIndex === -1) {
		return { kind: "missing", values: [], from: closing.from, to: closing.from, keyLineEnd: closing.from, closingFence: closing.from };
	}
	const keyLine = body[keyIndex];
	const rest = stripComment((KEY.exec(keyLine.text) as RegExpExecArray)[1]).trim();
	const base = { from: keyLine.from, keyLineEnd: keyLine.to, closingFence: closing.from };

	if (rest.startsWith("[")) {
		let joined = rest;
		let last = keyLine;
		for (let i = keyIndex + 1; !joined.includes("]") && i < body.length; i++) {
			joined += ` ${stripComment(body[i].text).trim()}`;
			last = body[i];
		}
		const close = joined.lastIndexOf("]");
		const inside = joined.slice(1, close === -1 ? joined.length : close);
		return { ...base, kind: "flow", values: flowItems(inside), to: last.to };
	}
	if (!isNull(rest) && !rest.startsWith("|") && !rest.startsWith(">")) {
		return { ...base, kind: "scalar", values: commaItems(unquote(rest)), to: keyLine.to };
	}
	const values: string[] = [];
	let to = keyLine.to;
	for (let i = keyIndex + 1; i < body.length; i++) {
		const line = body[i];
		if (line.text.trim() === "") continue;
		if (TOP_LEVEL_KEY.test(line.text)) break;
		const item = ITEM.exec(line.text);
		if (item) {
			const value = unquote(stripComment(item[1] ?? ""));
			if (value && !isNull(value)) values.push(value);
		}
		to = line.to;
	}
	return { ...base, kind: values.length > 0 || to > keyLine.to ? "block" : "empty", values, to };
}

/**
 * Close to the daemon's normalisation before comparing names (`fold`): case, accents, œ/æ
 * and punctuation do not make two aliases different.
 */
export function normalizeAlias(text: string): string {
	return text
		.toLowerCase()
		.replace(/ß/g, "ss")
		.replace(/œ/g, "oe")
		.replace(/æ/g, "ae")
		.normalize("NFKD")
		.replace(COMBINING, "")
		.replace(/[^\p{L}\p{N}]+/gu, " ")
		.trim();
}

/** One string of aliases as Obsidian reads it: the items between its commas (`Doggo, Woofer`). */
function commaItems(value: string): string[] {
	return value
		.split(",")
		.map((item) => item.trim())
		.filter((item) => item.length > 0);
}

/**
 * A frontmatter value as a list: none for a missing or blank one, a string as Obsidian reads
 * it (its comma-separated items), another single value as one item.
 */
function asList(value: unknown): unknown[] {
	if (value === undefined || value === null || value === "") return [];
	if (typeof value === "string") return commaItems(value);
	return Array.isArray(value) ? value : [value];
}

/** The key Obsidian reads `name` from: the first written in any case (`Aliases`), else `name`. */
function keyOf(frontmatter: Record<string, unknown>, name: string): string {
	return Object.keys(frontmatter).find((key) => key.toLowerCase() === name) ?? name;
}

/**
 * Adds `alias` to a parsed frontmatter (the object `processFrontMatter` hands out): a
 * missing key becomes a list, a single string becomes a list, an alias already there (after
 * normalisation) is not added twice. The key is the one the note has, in its case (`Aliases:`
 * gets no `aliases` beside it, which Obsidian would not read), and a string of aliases is split
 * as Obsidian reads it (`Doggo, Woofer` stays two aliases, not one « Doggo, Woofer »). The old
 * singular `alias` key, which neither Obsidian (since 1.9.10) nor the daemon reads, is moved
 * into `aliases`: added beside it, the note had two keys and its older aliases still counted for
 * nothing. An empty item (a `-` left alone) is dropped. Returns whether the frontmatter changed.
 */
export function addAlias(frontmatter: Record<string, unknown>, alias: string): boolean {
	const wanted = alias.trim();
	if (!wanted) return false;
	const key = keyOf(frontmatter, "aliases");
	const list = asList(frontmatter[key]).filter(isItem);
	const has = new Set(list.map((item) => normalizeAlias(scalarText(item))));
	if (has.has(normalizeAlias(wanted))) return false;
	const oldKey = keyOf(frontmatter, "alias");
	const old = asList(frontmatter[oldKey]).filter(isItem);
	const moved = old.every((item) => scalarText(item) !== "") ? old : []; // a mapping there is kept where it is
	for (const item of [...moved, wanted]) {
		const name = normalizeAlias(scalarText(item));
		if (has.has(name)) continue;
		has.add(name);
		list.push(item);
	}
	if (moved === old) delete frontmatter[oldKey];
	frontmatter[key] = list;
	return true;
}

/**
 * An item of an aliases list that holds something: a `-` left alone (null, as YAML reads it) or
 * an empty text is none, and written back it became `- null`.
 */
function isItem(value: unknown): boolean {
	return value !== null && value !== undefined && value !== "";
}

/** A YAML scalar as text; anything else (a nested object) matches no alias. */
function scalarText(value: unknown): string {
	return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : "";
}

function yamlString(value: string): string {
	return /^[\p{L}\p{N}][\p{L}\p{N} ._()'’-]*$/u.test(value) && !/^(?:true|false|null|yes|no|on|off|~)$/i.test(value)
		? value
		: JSON.stringify(value);
}

/**
 * The text with the frontmatter's aliases replaced by `aliases`, written as a block list;
 * every other line is kept as it was. A string edit that stands in for Obsidian's YAML round
 * trip where there is no Obsidian (tests, the browser harness).
 */
export function writeAliases(text: string, aliases: readonly string[]): string {
	const eol = text.includes("\r\n") ? "\r\n" : "\n";
	const where = locateAliases(text);
	const key = where.kind === "none" || where.kind === "missing" ? "aliases" : text.slice(where.from, where.keyLineEnd).split(":")[0].trimEnd();
	const block = [`${key}:`, ...aliases.map((a) => `  - ${yamlString(a)}`)].join(eol);
	if (where.kind === "none") return `---${eol}${block}${eol}---${eol}${text}`;
	if (where.kind === "missing") return `${text.slice(0, where.closingFence)}${block}${eol}${text.slice(where.closingFence)}`;
	return `${text.slice(0, where.from)}${block}${text.slice(where.to)}`;
}
