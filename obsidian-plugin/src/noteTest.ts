/**
 * « Tester cette note »: asks each question of the note's `answers` field as a visitor would and
 * reports where the note ranks. A note visitors cannot see is reported as such, with why,
 * instead of as "absent" everywhere.
 */

import { parseYaml } from "obsidian";
import { NOTE_TEST } from "./messages";
import type { Source } from "./protocol";
import { noteSlug } from "./slug";
import { NotToml, parseToml, tomlBasicString, TomlTime, TomlTooDeep } from "./toml";

export interface NoteUnderTest {
	/** Vault-relative path, as Obsidian's TFile.path. */
	path: string;
	/** File name without extension. */
	basename: string;
	frontmatter: Record<string, unknown> | undefined;
	/** The note's text: a frontmatter after blank lines is none to Obsidian, but may keep the note private. */
	text?: string;
}

export type QuestionOutcome =
	| { question: string; status: "first"; score: number }
	| { question: string; status: "lower"; rank: number; score: number; beatenBy: { slug: string; title: string; score: number } }
	| { question: string; status: "absent"; beatenBy: { slug: string; title: string; score: number } | null };

export type NoteTestReport =
	| { kind: "private"; slug: string; reason: string }
	| { kind: "no-questions"; slug: string }
	| { kind: "tested"; slug: string; outcomes: QuestionOutcome[]; visibilityHint: string | null };

/** Searches as a visitor and returns the ranked sources. */
export type VisitorSearch = (question: string) => Promise<Source[]>;

export interface NoteTestOptions {
	/**
	 * Whether the daemon treats a note without `visibility` as public (`grasbot serve
	 * --default-visibility public`). Unknown (undefined) means: search and find out.
	 */
	defaultPublic?: boolean;
	/**
	 * Where the daemon reads a date without its offset (GRASBOT_TIME_ZONE, in the owner's health):
	 * `UTC`, `local` or an IANA name. Unknown (undefined): UTC, the daemon's default.
	 */
	timeZone?: string;
}

/** The `answers` field as the daemon reads it: a list of strings, or one string. */
export function questionsOf(frontmatter: Record<string, unknown> | undefined): string[] {
	const raw = frontmatter?.answers;
	const items = Array.isArray(raw) ? raw : raw === undefined || raw === null ? [] : [raw];
	return items
		.filter((item): item is string | number => typeof item === "string" || typeof item === "number")
		.map((item) => String(item).trim())
		.filter((item) => item.length > 0);
}

/** Whether `publish` (Obsidian Publish) or `published` (Jekyll) keeps a note private, as the daemon reads it (retrieval/visibility.py `_says_no`):
 * every value but a yes (`true`, a number other than 0, `yes`, `oui`, `public`…) or a blank one. */
export function publishSaysNo(value: unknown): boolean {
	if (value === undefined || value === null) return false;
	if (typeof value === "boolean") return !value;
	if (typeof value === "number") return value === 0 || Number.isNaN(value);
	if (typeof value === "string") return !["true", "yes", "on", "1", "oui", "vrai", "public", ""].includes(value.trim().toLowerCase());
	return true;
}

/** Whether `published` holds a date (`2024-05-01`), the day a post came out in the themes that
 * name it so (Astro's Fuwari…), as the daemon reads it (retrieval/visibility.py `_is_date`): it publishes the note. */
export function isDate(value: unknown): boolean {
	return value instanceof Date || (typeof value === "string" && /^\d{4}-\d{2}-\d{2}(?:[T ][0-9:.+\-Z]*)?$/.test(value.trim()));
}

/** Whether `draft` marks the note a draft, as the daemon reads it (retrieval/visibility.py `_draft`):
 * true for a yes (`true`, a number other than 0, `yes`, `oui`…), false for a no (`false`, `0`,
 * `non`…) or a blank one, null for anything else, which keeps the note private too. */
export function draftSays(value: unknown): boolean | null {
	if (value === undefined || value === null) return false;
	if (typeof value === "boolean") return value;
	if (typeof value === "number") return Number.isNaN(value) ? null : value !== 0;
	if (typeof value !== "string") return null;
	const said = value.trim().toLowerCase();
	if (["true", "yes", "on", "1", "oui", "vrai"].includes(said)) return true;
	return ["false", "no", "off", "0", "non", "faux", ""].includes(said) ? false : null;
}

/** The fields named one of `names` in any case (`Publish:`, `DRAFT:`), in the note's order, as the daemon reads them. */
function fieldsNamed(frontmatter: Record<string, unknown> | undefined, ...names: string[]): [string, unknown][] {
	return Object.entries(frontmatter ?? {}).filter(([key]) => names.includes(key.trim().toLowerCase()));
}

function shownValue(value: unknown): string {
	return typeof value === "string" ? value : Array.isArray(value) || (value !== null && typeof value === "object" && !(value instanceof Date)) ? flowValue(value) : JSON.stringify(value);
}

// a text YAML reads as another type (a yes, a number, nothing), which the daemon's `yaml.safe_dump` quotes
const YAML_OTHER = /^(?:y(?:es)?|no?|true|false|on|off|null|~|[-+]?(?:\.?\d[\d_]*\.?[\d_]*(?:e[-+]?\d+)?|0x[\da-f_]+|\d[\d_]*(?::[0-5]?\d)+(?:\.[\d_]*)?|\.inf)|\.nan)$/i;

/** A list or mapping as the daemon's warnings show a value written on the lines below its key
 * (retrieval/visibility.py `_flow`, yaml.safe_dump's flow form): `[2000-01-01]`, `{a: 1}`, a text
 * quoted only where YAML would read it otherwise. A date Obsidian gives as text is left plain: the
 * daemon's YAML made it a date, which it writes so. */
function flowValue(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(flowValue).join(", ")}]`;
	if (value instanceof Date) return value.toISOString();
	if (value !== null && typeof value === "object") return `{${Object.entries(value).map(([key, item]) => `${flowValue(key)}: ${flowValue(item)}`).join(", ")}}`;
	if (typeof value !== "string") return value === undefined ? "null" : JSON.stringify(value);
	const plain = value !== "" && value.trim() === value && !/^(?:[-?:](?: |$)|[,[\]{}#&*!|>'"%@`])|[,[\]{}]|: |:$| #/.test(value) && !YAML_OTHER.test(value);
	return plain ? value : `'${value.replace(/'/g, "''")}'`;
}

/** The keys whose no keeps a note private (retrieval/visibility.py `_PUBLISH_KEYS`): Obsidian Publish's, Jekyll's, Digital Garden's. */
export const PUBLISH_KEYS = ["publish", "published", "dg-publish"] as const;
/** The keys whose yes keeps a note private, read as `draft` (retrieval/visibility.py `_HIDING_KEYS`). */
export const HIDING_KEYS = ["draft", "private", "hidden"] as const;

/** Hugo's build options and Eleventy's `permalink`, whose no writes no page (retrieval/visibility.py `_UNWRITTEN_KEYS`). */
export const UNWRITTEN_KEYS = ["build", "_build", "permalink"] as const;

/** Hugo's keys for a page's publish date and expiry date (retrieval/visibility.py `_PUBLISH_DATE_KEYS`,
 * `_EXPIRY_DATE_KEYS`): a publish date to come, or an expiry date past, keeps a public note private. */
export const PUBLISH_DATE_KEYS = ["publishdate", "pubdate", "published"] as const;
export const EXPIRY_DATE_KEYS = ["expirydate", "unpublishdate"] as const;

/** ISO 8601 as the daemon reads a note's dates: a date, then maybe a time (seconds and their
 * fraction optional) and its offset. */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?(Z|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

/** `Date.UTC`, but a year before 100 is that year (`Date.UTC` reads 0-99 as 1900-1999: Go's zero
 * date `0001-01-01` was 1901, no date at all to the check that follows). */
function utcTime(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, millis = 0): number {
	const time = new Date(0);
	time.setUTCFullYear(year, month, day);
	time.setUTCHours(hour, minute, second, millis);
	return time.getTime();
}

/** Milliseconds from UTC to the wall clock of the IANA zone `zone` at `instant`. */
function zoneOffset(instant: number, zone: string): number {
	const parts = new Intl.DateTimeFormat("en-US", {
		timeZone: zone,
		hourCycle: "h23",
		year: "numeric",
		month: "numeric",
		day: "numeric",
		hour: "numeric",
		minute: "numeric",
		second: "numeric",
	}).formatToParts(new Date(instant));
	const part = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
	const wall = utcTime(part("year"), part("month") - 1, part("day"), part("hour"), part("minute"), part("second"));
	return wall - (instant - (((instant % 1000) + 1000) % 1000));
}

/** The instant a wall-clock time (given as if in UTC) falls at in `zone`, as Hugo (Go's time.Date)
 * and the daemon (visibility.py `_in_zone`) read it, a time the clock skips or repeats too; null for a
 * zone this runtime does not know. */
function inZone(wall: number, zone: string): number | null {
	const low = zone.trim().toLowerCase();
	if (low === "utc" || low === "etc/utc" || low === "z") return wall;
	if (low === "local") {
		const d = new Date(wall);
		return new Date(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()).getTime();
	}
	try {
		const first = wall - zoneOffset(wall, zone.trim());
		return wall - zoneOffset(first, zone.trim());
	} catch {
		return null; // RangeError: a zone Intl does not know
	}
}

/** A frontmatter date in milliseconds, as the daemon reads it (retrieval/visibility.py `_instant`): a
 * date alone is its midnight, and it and a time without an offset are read in `zone`, the
 * daemon's GRASBOT_TIME_ZONE (`UTC`, `local` or an IANA name); an offset written is read as
 * written. null for what is no date (`bientôt`, `2026-13-01`, a number), and for year 0 (`0000-01-01`):
 * Python's datetime holds years 1 to 9999, the daemon reads no date there and keeps the note private. */
export function dateInstant(value: unknown, zone = "UTC"): number | null {
	if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime();
	if (typeof value !== "string") return null;
	const m = ISO_DATE.exec(value.trim());
	if (!m) return null;
	const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
	const millis = Number((m[7] ?? "").padEnd(3, "0").slice(0, 3));
	if (year < 1 || hour > 23 || minute > 59 || second > 59) return null;
	const wall = utcTime(year, month - 1, day, hour, minute, second, millis);
	const check = new Date(wall);
	if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null; // 2026-02-30
	const [offset, sign, hours, minutes] = [m[8], m[9], Number(m[10]), Number(m[11] ?? 0)];
	if (offset === undefined) return inZone(wall, zone);
	if (offset === "Z") return wall;
	if (hours > 23 || minutes > 59) return null;
	const shift = hours * 60 + minutes;
	return wall - (sign === "-" ? -shift : shift) * 60_000;
}

/** Why a note otherwise public is held back by its dates, as the daemon holds it (retrieval/visibility.py
 * `_scheduled`), or null; `now` in milliseconds. A blank date is no date. */
function scheduledReason(frontmatter: Record<string, unknown> | undefined, now: number, zone: string): string | null {
	for (const [key, value] of fieldsNamed(frontmatter, ...PUBLISH_DATE_KEYS, ...EXPIRY_DATE_KEYS)) {
		const low = key.trim().toLowerCase();
		if (value === undefined || value === null || value === "" || (low === "published" && !isDate(value))) continue;
		const at = dateInstant(value, zone);
		if (at === null) return NOTE_TEST.dateUnreadable(key, shownValue(value));
		const publishes = (PUBLISH_DATE_KEYS as readonly string[]).includes(low);
		if (publishes && at > now) return NOTE_TEST.publishLater(key, shownValue(value));
		if (!publishes && at <= now) return NOTE_TEST.expired(key, shownValue(value));
	}
	return null;
}

/** Whether Hugo's `build: {render: …}` writes the page, as the daemon reads it (retrieval/visibility.py `_renders`):
 * true for `always` (a yes, a blank), false for `never` and `link` (a no), null for anything else, which keeps the note private too. */
export function rendersPage(value: unknown): boolean | null {
	if (value === undefined || value === null) return true;
	if (typeof value === "boolean") return value;
	if (typeof value !== "string" && !(typeof value === "number" && Number.isInteger(value))) return null;
	const said = String(value).trim().toLowerCase();
	if (["always", "true", "1", ""].includes(said)) return true;
	return ["never", "link", "false", "0"].includes(said) ? false : null;
}

/** Why the note's publisher writes no page of it, as the daemon reads it (retrieval/visibility.py `_unwritten`), or null:
 * Hugo's `build: {render: never}` (or `link`, `_build`), Eleventy's `permalink: false`. */
function unwrittenReason(frontmatter: Record<string, unknown> | undefined): string | null {
	for (const [key, value] of fieldsNamed(frontmatter, ...UNWRITTEN_KEYS)) {
		if (key.trim().toLowerCase() === "permalink") {
			if (value === false || (typeof value === "string" && value.trim().toLowerCase() === "false")) return NOTE_TEST.notWritten(`${key.trim()}: ${shownValue(value)}`, "Eleventy");
			continue;
		}
		if (value === null || typeof value !== "object" || Array.isArray(value)) continue; // `build: 1.2.3`, a software's
		for (const [option, render] of Object.entries(value as Record<string, unknown>)) {
			if (option.trim().toLowerCase() !== "render" || rendersPage(render) === true) continue;
			const shown = `${key.trim()}.${option.trim()}: ${shownValue(render)}`;
			return rendersPage(render) === false ? NOTE_TEST.notWritten(shown, "Hugo") : NOTE_TEST.renderUnclear(shown);
		}
	}
	return null;
}

/** What Python's difflib.SequenceMatcher(None, a, b).ratio() gives (Ratcliff/Obershelp: the
 * longest common run, then the same on each side of it), for the short keys it compares. */
function similarity(a: string, b: string): number {
	const matched = (a0: number, a1: number, b0: number, b1: number): number => {
		let best = 0;
		let atA = a0;
		let atB = b0;
		for (let i = a0; i < a1; i++) {
			for (let j = b0; j < b1; j++) {
				let k = 0;
				while (i + k < a1 && j + k < b1 && a[i + k] === b[j + k]) k++;
				if (k > best) [best, atA, atB] = [k, i, j];
			}
		}
		return best === 0 ? 0 : best + matched(a0, atA, b0, atB) + matched(atA + best, a1, atB + best, b1);
	};
	return a.length + b.length === 0 ? 1 : (2 * matched(0, a.length, 0, b.length)) / (a.length + b.length);
}

/** A key its author meant as `visibility` (`visibilité`, `visiblity`), which the daemon does not
 * read and which keeps the note private (retrieval/visibility.py `_nearly_visibility`). */
export function nearlyVisibility(key: string): boolean {
	const trimmed = key.trim();
	if (trimmed.length < 8 || trimmed.length > 12) return false;
	const folded = trimmed.toLowerCase().normalize("NFKD").replace(/\p{M}/gu, "");
	return folded !== "visibility" && similarity(folded, "visibility") >= 0.85;
}

// A frontmatter behind blank lines, spaces or what shows nothing, or whose opening `---` is followed
// by what shows nothing: Obsidian reads no properties there, the daemon neither, but it keeps the
// note private when they say so (retrieval/visibility.py `_LATE_FRONTMATTER`). Python's `\s` holds
// the separators `\x1c`-`\x1f` and `\x85` too, which JavaScript's does not
// eslint-disable-next-line no-control-regex -- the separators Python's `\s` reads
const LATE_FRONTMATTER = /^[\s\x1c-\x1f\x85\u200b-\u200d\u2060\ufeff]*---[ \t\u00a0\u200b-\u200d\u2060\ufeff]*\n([\s\S]*?)\n---[ \t]*(?:\n|$)/;
// a key as Python's `\w` reads it, a letter or digit of any script (`visibilité`), not only ASCII's, at a line's start as
// PyYAML reads it, as the daemon's `_READER_LINE` (frontmatter.py `LINE_START`): after a line feed or another of YAML's
// line breaks (`\r`, U+0085, U+2028, U+2029), which Obsidian reads as text; a lower block's `x: a\u2028draft: true` is a
// draft to the daemon, which served the note when its search ended a line at `\n` only
const READER_LINE = /(?<![^\n\r\x85\u2028\u2029])[ \t]*([\p{L}\p{N}_][\p{L}\p{N}_.-]*(?: +[\p{L}\p{N}_.-]+)*)[ \t]*:/gu;
// YAML's line breaks, where a line the daemon's warning shows ends (visibility.py `_YAML_LINE`)
const YAML_BREAK = /[\n\r\x85\u2028\u2029]/;
// the fields the daemon reads as the text written (retrieval/frontmatter.py `TEXT_FIELDS`)
const TEXT_FIELDS = ["title", "slug", "type", "source", "updated", "domains", "tags", "aliases", "answers", "linked", "related"];
// the keys the daemon reads (retrieval/visibility.py `_FIELDS`): a frontmatter with none of them is text to it
const KNOWN_KEYS = ["visibility", "priority", ...TEXT_FIELDS];

// the keys that say who may read a note (retrieval/visibility.py `_READER_KEYS`: Hugo's dates too)
const READER_KEYS: readonly string[] = ["visibility", ...PUBLISH_KEYS, ...HIDING_KEYS, ...UNWRITTEN_KEYS, ...PUBLISH_DATE_KEYS, ...EXPIRY_DATE_KEYS];

/** Whether a key says who may read the note, as the daemon's `_says_who_reads`. */
function saysWhoReads(key: string): boolean {
	return READER_KEYS.includes(key.trim().toLowerCase()) || nearlyVisibility(key);
}

/** Why a frontmatter written after blank lines, spaces or an invisible character keeps the note
 * private, as the daemon reads it (retrieval/visibility.py `_late_frontmatter_keeps_private`), or null.
 * `second`: `text` is the body after the note's properties, and such a block there a second one,
 * which counts only when it says who may read the note (its silence says nothing). */
function lateReason(text: string, defaultPublic: boolean | undefined, now: number, zone: string, second = false): string | null {
	const late = LATE_FRONTMATTER.exec(text);
	if (!late) return null;
	const says = [...late[1].matchAll(READER_LINE)].some((line) => saysWhoReads(line[1]));
	if (second && !says) return null;
	let meta: unknown;
	try {
		meta = loadedYaml(late[1]);
	} catch {
		return says ? (second ? NOTE_TEST.secondBroken : NOTE_TEST.lateBroken) : null;
	}
	if (meta === null || typeof meta !== "object" || Array.isArray(meta)) return null;
	const fields = meta as Record<string, unknown>;
	if (!Object.keys(fields).some((key) => KNOWN_KEYS.includes(key.trim().toLowerCase()) || saysWhoReads(key))) return null;
	const twice = readerTwice(late[1]);
	const reason = twice !== undefined ? NOTE_TEST.fieldTwice(twice) : privateReason(fields, (defaultPublic ?? false) || second, undefined, now, zone);
	return reason === null ? null : second ? NOTE_TEST.secondKeeps(reason) : NOTE_TEST.lateKeeps(reason);
}

// Hugo's TOML front matter, between two `+++` lines at the top of the note: text to Obsidian,
// the page's fields to Hugo (retrieval/visibility.py `_TOML_FRONTMATTER`)
// eslint-disable-next-line no-control-regex -- the separators Python's `\s` reads
const TOML_FRONTMATTER = /^[\s\x1c-\x1f\x85\u200b-\u200d\u2060\ufeff]*\+\+\+[ \t]*\n([\s\S]*?)\n\+\+\+[ \t]*(?:\n|$)/;
// a line that names a key or opens a table (`[build]`), in TOML or not (`visibilité = …`: TOML's bare keys
// are ASCII), as the daemon's `_TOML_LINE`
const TOML_NAMED = /^[ \t]*(?:\[[ \t]*)?("[^"\n]*"|'[^'\n]*'|[\p{L}\p{N}_-]+)[ \t]*[.=\]]/u;

/** A TOML key, bare or quoted, as TOML reads it (retrieval/visibility.py `_toml_key`): a quoted
 * one's escapes too (`"dr\u0061ft"` is `draft`); undefined when they are no TOML escapes. */
function tomlKey(written: string): string | undefined {
	if (written.startsWith("'")) return written.slice(1, -1);
	return written.startsWith('"') ? tomlBasicString(written.slice(1, -1)) : written;
}

/** The daemon's bound on a front matter's nesting (retrieval/frontmatter.py `MAX_DEPTH`). */
const MAX_DEPTH = 32;

// A dotted key of more parts than `MAX_DEPTH` where TOML reads a key (a line's start, a table's header, an inline
// table's `{` or `,`), as the daemon finds it before tomllib (retrieval/visibility.py `_TOML_LONG_KEY`): its tables
// nest past the bound, and reading one took time and memory quadratic in its parts (100,000: out of memory)
const TOML_PART = String.raw`(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')`;
const TOML_LONG_KEY = new RegExp(
	String.raw`(?:^[ \t]*(?:\[\[?[ \t]*)?|[{,][ \t]*)(?:${TOML_PART}[ \t]*\.[ \t]*){${MAX_DEPTH}}${TOML_PART}(?:[ \t]*\.[ \t]*${TOML_PART})*[ \t]*[=\]]`,
	"m",
);

/** Whether lists and tables nest in `value` past `depth` levels, as the daemon counts them (retrieval/visibility.py
 * `_nested_past`): a TOML or JSON front matter that does leaves the note out, « note ignorée ». */
function nestedPast(value: unknown, depth: number): boolean {
	if (depth < 0) return true;
	const inside = Array.isArray(value) ? value : value !== null && typeof value === "object" && !(value instanceof TomlTime) ? Object.values(value) : [];
	return inside.some((item) => nestedPast(item, depth - 1));
}

/** Whether lists and mappings nest in YAML properties past `depth` levels, as the daemon counts
 * them before it loads a note (retrieval/frontmatter.py `_check_bounds`: the properties' own mapping
 * is a level, an empty list one too, where `nestedPast` counts what a level holds); each read once,
 * as an alias is the same list or mapping again, and one that holds itself is past any bound. */
function yamlNestedPast(properties: Record<string, unknown>, depth: number): boolean {
	const levels = new Map<object, number>();
	const reading = new Set<object>();
	const levelsOf = (value: unknown, room: number): number => {
		if (value === null || typeof value !== "object" || value instanceof Date) return 0;
		const known = levels.get(value);
		if (known !== undefined) return known;
		if (room === 0 || reading.has(value)) return Infinity;
		reading.add(value);
		let deepest = 0;
		for (const item of Array.isArray(value) ? value : Object.values(value)) {
			deepest = Math.max(deepest, levelsOf(item, room - 1));
			if (deepest === Infinity) break;
		}
		reading.delete(value);
		levels.set(value, deepest + 1);
		return deepest + 1;
	};
	return levelsOf(properties, depth) > depth;
}

/** The daemon's bounds on what YAML properties amount to, each alias expanded (retrieval/frontmatter.py `MAX_NODES`, `MAX_CHARS`). */
const MAX_NODES = 20_000;
const MAX_CHARS = 1_000_000;

/** Whether YAML properties expand past the daemon's bounds by their aliases (the « billion laughs »), as it measures
 * them before it loads a note (retrieval/frontmatter.py `_check_bounds`): each list, mapping (its keys too) and value,
 * and their characters, counted with every alias expanded, against `MAX_NODES` (or the values written, when more) and
 * `MAX_CHARS` (or the header's length). Obsidian's reading gives an alias as the same list or mapping again: each is
 * measured once, so a bomb of 9 × 9 lists costs 81 items, not 9⁹. For properties `yamlNestedPast` bounds (no loop). */
function yamlExpandsPast(properties: Record<string, unknown>, header: string): boolean {
	const measured = new Map<object, [number, number]>();
	let written = 0; // the values as written, each alias once
	const isScalar = (value: unknown): boolean => value === null || typeof value !== "object" || value instanceof Date;
	const scalarLength = (value: unknown): number =>
		typeof value === "string" ? value.length : typeof value === "number" || typeof value === "boolean" ? String(value).length : value instanceof Date ? value.toISOString().length : 0;
	const measure = (value: unknown): [number, number] => {
		if (isScalar(value)) return [1, scalarLength(value)];
		const known = measured.get(value as object);
		if (known !== undefined) return known;
		written++;
		let [nodes, chars] = [1, 0];
		for (const item of Array.isArray(value) ? value : Object.entries(value as object).flat()) {
			if (isScalar(item)) written++;
			const [n, c] = measure(item);
			[nodes, chars] = [nodes + n, chars + c];
		}
		measured.set(value as object, [nodes, chars]);
		return [nodes, chars];
	};
	const [nodes, chars] = measure(properties);
	return nodes > Math.max(MAX_NODES, written) || chars > Math.max(MAX_CHARS, header.length);
}

/** A TOML front matter's fields as the daemon's tomllib reads them (`parseToml`); null for TOML it refuses,
 * "deep" for fields nested past `MAX_DEPTH`. */
function tomlFields(block: string): Record<string, unknown> | null | "deep" {
	if (TOML_LONG_KEY.test(block)) return "deep";
	try {
		const fields = parseToml(block);
		return nestedPast(fields, MAX_DEPTH) ? "deep" : fields;
	} catch (error) {
		if (error instanceof TomlTooDeep) return "deep";
		if (error instanceof NotToml) return null;
		throw error;
	}
}

/** Why Hugo's TOML front matter keeps the note private, as the daemon reads it (retrieval/visibility.py
 * `_toml_frontmatter`), or null: its fields count as the properties' do, but only to keep it private.
 * `hidden`: it is in an HTML comment (`commentReason`), which the reason says. */
function tomlReason(text: string, now: number, zone: string, hidden = false): string | null {
	const toml = TOML_FRONTMATTER.exec(text.replace(/\r\n?/g, "\n"));
	if (!toml) return null;
	const readers = toml[1]
		.split("\n")
		.filter((line) => {
			const key = TOML_NAMED.exec(line)?.[1];
			return key !== undefined && saysWhoReads(tomlKey(key) ?? key.slice(1, -1));
		})
		.map((line) => `\`${line.trim()}\``);
	if (readers.length === 0) return null;
	const fields = tomlFields(toml[1]);
	const format = "TOML (entre deux +++)";
	if (fields === "deep") return NOTE_TEST.frontmatterTooDeep(format);
	if (fields === null) return hidden ? NOTE_TEST.commentBroken(format, readers.join(", ")) : NOTE_TEST.tomlBroken(readers.join(", "));
	const reason = privateReason(fields, true, undefined, now, zone);
	return reason === null ? null : hidden ? NOTE_TEST.commentKeeps(format, reason) : NOTE_TEST.tomlKeeps(reason);
}

// Hugo's JSON front matter, an object at the top of the note: text to Obsidian, the page's fields
// to Hugo (retrieval/visibility.py `_JSON_FRONTMATTER`)
const JSON_FRONTMATTER = /^[\s\u200b-\u200d\u2060\ufeff]*(?=\{)/;
// a key and its colon, then its value on that line, quoted or not (retrieval/visibility.py `_JSON_KEY`)
const JSON_KEY = /(?:^|(?<=[{,]))[ \t]*(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([\p{L}\p{N}_-]+))[ \t]*:[^,}\n]*/gmu;

/** The JSON front matter opening at `start`, where Hugo's lexer ends it (retrieval/visibility.py
 * `_json_block`): at the brace that closes the first outside quotes, a backslash escaping what follows it. */
function jsonBlock(text: string, start: number): string {
	let depth = 0;
	let quoted = false;
	for (let i = start; i < text.length; i++) {
		const char = text[i];
		if (char === "\\") i++;
		else if (char === '"') quoted = !quoted;
		else if (!quoted && (char === "{" || char === "}")) {
			depth += char === "{" ? 1 : -1;
			if (depth === 0) return text.slice(start, i + 1);
		}
	}
	return text.slice(start);
}

/** A `JSON_KEY` match's key, its escapes read (`"dr\u0061ft"` is `draft`). */
function jsonKey([, quoted, single, bare]: RegExpMatchArray): string {
	if (quoted === undefined) return single ?? bare;
	try {
		return String(JSON.parse(`"${quoted}"`));
	} catch {
		return quoted;
	}
}

/** Why Hugo's JSON front matter keeps the note private, as the daemon reads it (retrieval/visibility.py
 * `_json_frontmatter`), or null: its fields count as the properties' do, but only to keep it private;
 * a key that says who reads the note given twice, or JSON that does not parse and names one, too.
 * `hidden`: it is in an HTML comment (`commentReason`), which the reason says. */
function jsonReason(text: string, now: number, zone: string, hidden = false): string | null {
	const normalized = text.replace(/\r\n?/g, "\n");
	const opening = JSON_FRONTMATTER.exec(normalized);
	if (!opening) return null;
	const block = jsonBlock(normalized, opening[0].length);
	const readers = [...block.matchAll(JSON_KEY)].filter((line) => saysWhoReads(jsonKey(line)));
	const format = "JSON (un objet { … })";
	let meta: unknown;
	try {
		meta = JSON.parse(block);
	} catch {
		const said = readers.map((line) => `\`${line[0].trim()}\``).join(", ");
		return readers.length === 0 ? null : hidden ? NOTE_TEST.commentBroken(format, said) : NOTE_TEST.jsonBroken(said);
	}
	if (nestedPast(meta, MAX_DEPTH)) return readers.length === 0 ? null : NOTE_TEST.frontmatterTooDeep(format);
	const seen = new Set<string>();
	for (const line of readers.filter((line) => line[1] !== undefined)) {
		const key = jsonKey(line);
		if (seen.has(key)) return hidden ? NOTE_TEST.commentBroken(format, `\`${key}\` donné plus d'une fois`) : NOTE_TEST.jsonTwice(key);
		seen.add(key);
	}
	const reason = privateReason(meta as Record<string, unknown>, true, undefined, now, zone);
	return reason === null ? null : hidden ? NOTE_TEST.commentKeeps(format, reason) : NOTE_TEST.jsonKeeps(reason);
}

// Hugo's Org front matter: the lines at the top of the note while each starts with `#+`, text to
// Obsidian (retrieval/visibility.py `_ORG_FRONTMATTER`); a line Hugo's Org reader reads as a key and
// its value (`_ORG_KEYWORD`), the key any `#+` line names (`_ORG_NAMED`), an Org date (`_ORG_DATE`)
const ORG_FRONTMATTER = /^[\s\u200b-\u200d\u2060\ufeff]*(#\+[^\n]*(?:\n#\+[^\n]*)*)/;
const ORG_KEYWORD = /^#\+([^:]+):(?:[ \t\f\r]+([^\n]*)|[ \t\f\r]*$)/;
const ORG_NAMED = /^#\+[ \t]*([^:\s]+)/;
const ORG_DATE = /[<[](\d{4}-\d{2}-\d{2}) /;
const ORG_DATE_KEYS = ["date", "lastmod", "publishdate", "expirydate"];

/** Org front matter's `#+key: value` lines as Hugo reads them (retrieval/visibility.py `_org_fields`):
 * a key in lower case, a value as text, a key given twice a list, `#+key[]: a b` a list of words, an
 * Org date its day for Hugo's date keys. */
function orgFields(lines: string[]): Record<string, unknown> {
	const given = new Map<string, string>();
	for (const line of lines) {
		const keyword = ORG_KEYWORD.exec(line);
		if (!keyword) continue;
		const key = keyword[1].toLowerCase();
		const value = (keyword[2] ?? "").trim();
		given.set(key, given.has(key) ? `${given.get(key)}\n${value}` : value);
	}
	const fields: Record<string, unknown> = {};
	for (const [key, value] of given) {
		if (key.endsWith("[]")) fields[key.slice(0, -2)] = value.split(/\s+/).filter(Boolean);
		else if (value.includes("\n")) fields[key] = value.split("\n");
		else fields[key] = (ORG_DATE_KEYS.includes(key) ? orgDay(value) : null) ?? value;
	}
	return fields;
}

/** The day of the first Org date a `>` or `]` closes further on in `value`, one line (retrieval/visibility.py
 * `_org_day`): the opening searched before the last of them only, where `[<[](day) [^\n]*[>\]]` read the rest of
 * the line again from each `<` (a line of `<2020-01-01 ` never closed: 240 KB froze Obsidian 20 s). */
function orgDay(value: string): string | null {
	const closing = Math.max(value.lastIndexOf(">"), value.lastIndexOf("]"));
	return ORG_DATE.exec(value.slice(0, Math.max(closing, 0)))?.[1] ?? null;
}

/** Why Hugo's Org front matter keeps the note private, as the daemon reads it (retrieval/visibility.py
 * `_org_frontmatter`), or null: its fields count as the properties' do, but only to keep it private;
 * a line that names a key that says who reads the note in a form Hugo does not read, too.
 * `hidden`: it is in an HTML comment (`commentReason`), which the reason says. */
function orgReason(text: string, now: number, zone: string, hidden = false): string | null {
	const org = ORG_FRONTMATTER.exec(text.replace(/\r\n?/g, "\n"));
	if (!org) return null;
	const lines = org[1].split("\n");
	const named = lines.filter((line) => {
		const key = ORG_NAMED.exec(line)?.[1];
		return key !== undefined && saysWhoReads(key.replace(/\[\]$/, ""));
	});
	if (named.length === 0) return null;
	const format = "Org (des lignes #+clé: valeur)";
	const unread = named.filter((line) => !ORG_KEYWORD.test(line)).map((line) => `\`${line.trim()}\``);
	if (unread.length > 0) return hidden ? NOTE_TEST.commentBroken(format, unread.join(", ")) : NOTE_TEST.orgUnread(unread.join(", "));
	const reason = privateReason(orgFields(lines), true, undefined, now, zone);
	return reason === null ? null : hidden ? NOTE_TEST.commentKeeps(format, reason) : NOTE_TEST.orgKeeps(reason);
}

// Hugo's front matter in an HTML comment at the top of the note, which Obsidian hides: blanks, the
// rest of each line a `<!--` opens skipped, then a front matter as at the top; a YAML one up to the
// next line that starts with `---`, or, none closing it, to the end of the comment
// (retrieval/visibility.py `_COMMENT_OPENING`, `_COMMENTED_YAML`)
const COMMENT_OPENING = /^(?:[\s\u200b-\u200d\u2060\ufeff]*<!--[^\n]*\n)+/;
const COMMENTED_YAML = /^[\s\u200b-\u200d\u2060\ufeff]*---([^\n]*\n[\s\S]*?)(?:\n---|(?<open>(?![\s\S])))/;

/** `loadedYaml`'s reading of `text`, or undefined where it throws (broken YAML); `checked` false: `parseYaml`'s alone. */
function yamlOrUndefined(text: string, checked = true): unknown {
	try {
		return checked ? loadedYaml(text) : parseYaml(text);
	} catch {
		return undefined;
	}
}

/** Why a YAML front matter at the top of the comment's text keeps the note private, as the daemon
 * reads it (retrieval/visibility.py `_commented_yaml`), or null: only to keep it private; YAML that
 * does not parse and names a key that says who reads the note, or a block never closed that names one, too. */
function commentedYamlReason(text: string, now: number, zone: string): string | null {
	const yaml = COMMENTED_YAML.exec(text);
	if (!yaml) return null;
	const format = "YAML (entre deux ---)";
	const open = yaml.groups?.open !== undefined;
	const fields = open ? yaml[1].split("-->")[0] : yaml[1];
	const readers = [...fields.matchAll(READER_LINE)]
		.filter((line) => saysWhoReads(line[1]))
		.map((line) => `\`${fields.slice(line.index).split(YAML_BREAK)[0].trim()}\``);
	const meta = open ? undefined : yamlOrUndefined(fields); // a block never closed is no YAML either
	if (meta === undefined) return readers.length === 0 ? null : NOTE_TEST.commentBroken(format, readers.join(", "));
	if (meta === null || typeof meta !== "object" || Array.isArray(meta)) return null;
	const twice = readerTwice(fields);
	if (twice !== undefined) return NOTE_TEST.commentBroken(format, `\`${twice}\` donné plus d'une fois`); // as JSON's
	const reason = privateReason(meta as Record<string, unknown>, true, undefined, now, zone);
	return reason === null ? null : NOTE_TEST.commentKeeps(format, reason);
}

/** Why Hugo's front matter in an HTML comment at the top of the note keeps it private, as the daemon
 * reads it (retrieval/visibility.py `_commented_frontmatter`), or null: YAML, TOML, JSON or Org, its
 * fields only keep the note private; a comment never closed (Hugo then builds no page) is read the same. */
function commentReason(text: string, now: number, zone: string): string | null {
	const normalized = text.replace(/\r\n?/g, "\n");
	const opening = COMMENT_OPENING.exec(normalized);
	if (!opening) return null;
	const inner = normalized.slice(opening[0].length);
	return commentedYamlReason(inner, now, zone) ?? tomlReason(inner, now, zone, true) ?? jsonReason(inner, now, zone, true) ?? orgReason(inner, now, zone, true);
}

// Obsidian's properties at the top of a note: the block a lower one is not
const TOP_FRONTMATTER = /^---[ \t]*\n(?:([\s\S]*?)\n)?---[ \t]*(?:\n|$)/;
// what the daemon's YAML reads as a date in a plain scalar (retrieval/frontmatter.py `_TIMESTAMP`), and then makes one
const YAML_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[-+](?:[01]\d|2[0-3])(?::[0-5]\d)?)?)?$/;

// a top-level field's key, quoted or up to its first colon, blanks before the colon left out: ending on neither blank nor
// colon, it is tried once against the blanks after it (a lazy key tried each of its lengths against them all, quadratic:
// a line of one character and 300,000 blanks froze Obsidian 176 s)
const FIELD_KEY = /^(?:"([^"]*)"|'([^']*)'|([^"'](?:[^:]*[^: \t])?))[ \t]*:(?:[ \t]|$)/;

/** The key of the top-level field `line` opens (`FIELD_KEY`), quotes taken off, or undefined. */
function fieldKey(line: string): string | undefined {
	const named = FIELD_KEY.exec(line);
	return named ? (named[1] ?? named[2] ?? named[3]) : undefined;
}

// a line's texts in quotes, taken out before looking for what only counts outside them (a quote opened, a comment)
const QUOTED_ON_LINE = /"(?:[^"\\]|\\.)*"|'[^']*'/g;

/** The lines of each top-level field of a YAML header, by its key as written (quotes taken off):
 * its own line and those that follow it, indented, list items or comments. */
function fieldLines(header: string): Map<string, string> {
	const fields = new Map<string, string>();
	let key: string | undefined;
	for (const line of header.split("\n")) {
		if (/^[^\s#-]/.test(line)) key = fieldKey(line);
		if (key !== undefined) fields.set(key, `${fields.get(key) ?? ""}${line}\n`);
	}
	return fields;
}

/** `header` with only the last of the top-level fields given the same key, as PyYAML keeps it (a warning says so), where
 * Obsidian's reading refuses the YAML (« duplicated mapping key ») and gives no properties; the keys given twice; and
 * the earlier fields of those keys, each its own lines, whose values PyYAML makes before it drops them. */
function lastOfEach(header: string): [string, string[], string[]] {
	const lines = header.split("\n");
	const fields: [string | undefined, number][] = []; // each line's field: its key, its first line
	let field: [string | undefined, number] = [undefined, -1];
	for (const [n, line] of lines.entries()) {
		if (/^[^\s#-]/.test(line)) field = [fieldKey(line), n];
		fields.push(field);
	}
	const last = new Map<string, number>();
	const twice = new Set<string>();
	for (const [n, [key, start]] of fields.entries()) {
		if (key === undefined || start !== n) continue;
		if (last.has(key)) twice.add(key);
		last.set(key, n);
	}
	if (twice.size === 0) return [header, [], []];
	const kept = (n: number): boolean => fields[n][0] === undefined || !twice.has(fields[n][0]) || fields[n][1] === last.get(fields[n][0]);
	const earlier = new Map<number, string[]>(); // an earlier field's first line: its lines
	for (const [n, line] of lines.entries()) {
		if (kept(n)) continue;
		const field = earlier.get(fields[n][1]);
		if (field === undefined) earlier.set(fields[n][1], [line]);
		else field.push(line);
	}
	return [lines.filter((_, n) => kept(n)).join("\n"), [...twice], [...earlier.values()].map((field) => field.join("\n"))];
}

/** A date no calendar has in the earlier fields of a top-level key given twice (`created: 2024-02-30` then `created:
 * 1`), as impossibleDate says it: PyYAML makes each value before it keeps the last, and the daemon leaves the note out. */
function earlierDate(fields: string[]): [string, string, boolean] | null {
	for (const field of fields) {
		let read: unknown;
		try {
			read = parseYaml(field);
		} catch {
			continue; // the field's own YAML refused: the whole header's reading says so
		}
		const found = read !== null && typeof read === "object" && !Array.isArray(read) ? impossibleDate(read as Record<string, unknown>, field) : null;
		if (found) return found;
	}
	return null;
}

/** `header` with each key given again lower in the same block mapping below the top level (`x:` then `  a: 1` and
 * `  a: 2`, a list item's `- a: 1` then `  a: 2`) renamed in its earlier lines, which Obsidian's reading refuses
 * (« duplicated mapping key ») and PyYAML reads, the last one kept: that one is read as the daemon reads it, and the
 * earlier ones, which PyYAML makes before it drops them (a date no calendar has leaves the note out still), are
 * kept under another name, which `renamed` maps to the key as written, for the messages. Read line by line: a line of a
 * block scalar (`|`, `>`) holds no key. */
function nestedLastOfEach(header: string, renamed = new Map<string, string>()): string {
	const lines = header.split("\n");
	const open: { column: number; keys: Map<string, [number, number, number]> }[] = []; // the block mappings, innermost last
	const twice = new Map<number, [number, number, string]>(); // a line: where its key starts and ends, the key
	let literal = -1; // in a block scalar: the indent of the line that opens it
	for (const [n, line] of lines.entries()) {
		const indent = /^[ \t]*/.exec(line)?.[0].length ?? 0;
		if (indent === line.length || line[indent] === "#" || (literal >= 0 && indent > literal)) continue;
		literal = -1;
		while (open.length > 0 && open[open.length - 1].column > indent) open.pop();
		const column = indent + (/^(?:-[ \t]+)*/.exec(line.slice(indent))?.[0].length ?? 0);
		const named = FIELD_KEY.exec(line.slice(column));
		if (named === null) continue;
		const key = named[1] ?? named[2] ?? named[3];
		let mapping = open[open.length - 1];
		if (mapping === undefined || mapping.column !== column) open.push((mapping = { column, keys: new Map() }));
		const earlier = mapping.keys.get(key);
		if (earlier !== undefined && column > 0) twice.set(earlier[0], [earlier[1], earlier[2], key]);
		mapping.keys.set(key, [n, column, column + (named[3]?.length ?? key.length + 2)]);
		if (/^[|>][-+0-9]*[ \t]*(?:#|$)/.test(line.slice(column + named[0].length).trimStart())) literal = indent;
	}
	if (twice.size === 0) return header;
	for (const [n, [, , key]] of twice) renamed.set(`${n}_twice`, key);
	return lines.map((line, n) => (twice.has(n) ? `${line.slice(0, twice.get(n)?.[0])}${n}_twice${line.slice(twice.get(n)?.[1])}` : line)).join("\n");
}

// a plain scalar in a block, up to a key's colon, a comment or its line's end; in a flow, up to a `,`, `[`, `]`, `{`, `}`
// too, or a `:` before a blank or one of them: its blanks tried once against what follows them (flowLastOfEach, longKey)
const BLOCK_PLAIN = /(?:[^\s:#]|:(?!\s)|(?<!\s)#|[ \t]+(?=[^\s:#]|:(?!\s)))*/y;
const FLOW_PLAIN = /(?:[^\s,[\]{}:#]|:(?![\s,[\]{}])|(?<!\s)#|[ \t\n]+(?=[^\s,[\]{}:#]|:(?![\s,[\]{}])))*/y;

/** `header` with each key given again in the same flow mapping below the top level (`x: {a: 1, a: 2}`, `[{a: 1, a: 2}]`,
 * `{a, a}`) renamed where it is given first, as nestedLastOfEach does in a block mapping: Obsidian's reading refuses it,
 * PyYAML keeps the last. Read once, left to right: quotes and comments hold no key, a key that is a list or a mapping
 * is none (PyYAML cannot hash it), a flow mapping that is the properties themselves is left to lastOfEach. `renamed`
 * maps each new name to the key as written. */
function flowLastOfEach(header: string, renamed = new Map<string, string>()): string {
	const open: { keys: Map<string, [number, number]> | null; key: boolean }[] = []; // the flow collections, innermost last; a list's keys null
	const twice: [number, number, string][] = [];
	let last = "\n"; // the last character read that is not blank
	const atNode = (i: number): boolean => (open.length > 0 && "[{,:?".includes(last)) || (":?-\n".includes(last) && /\s/.test(header[i - 1] ?? "\n"));
	const keyRead = (name: string, start: number, end: number): void => {
		const mapping = open[open.length - 1];
		if (mapping?.keys == null || !mapping.key) return;
		mapping.key = false;
		const earlier = mapping.keys.get(name);
		if (earlier !== undefined) twice.push([...earlier, name]);
		mapping.keys.set(name, [start, end]);
	};
	for (let i = 0; i < header.length; i++) {
		const char = header[i];
		if (char === " " || char === "\t" || (char === "\n" && open.length > 0)) continue;
		const top = open[open.length - 1];
		if ((char === "!" || char === "&") && atNode(i)) {
			i = (/\s/.exec(header.slice(i, i + 1024))?.index ?? 1024) + i - 1; // a tag or an anchor: the node starts after it
			continue;
		}
		if (char === "#" && /\s/.test(header[i - 1] ?? "\n")) i = (header.indexOf("\n", i) + 1 || header.length) - 1;
		else if ((char === '"' || char === "'") && atNode(i)) {
			const quoted = char === '"' ? /"((?:[^"\\]|\\[\s\S])*)"/y : /'((?:[^']|'')*)'/y;
			quoted.lastIndex = i;
			const found = quoted.exec(header);
			if (found === null) return header; // never closed: YAML that does not parse
			keyRead(char === '"' ? found[1] : found[1].replace(/''/g, "'"), i, quoted.lastIndex);
			i = quoted.lastIndex - 1;
		} else if ((char === "[" || char === "{") && atNode(i)) {
			if (top !== undefined) top.key = false; // a list or a mapping as a key: none PyYAML hashes
			const properties = open.length === 0 && /^[ \t]*$/.test(header.slice(header.lastIndexOf("\n", i - 1) + 1, i));
			open.push({ keys: char === "{" && !properties ? new Map() : null, key: true });
		} else if ((char === "]" || char === "}") && top !== undefined) open.pop();
		else if (char === "," && top !== undefined) top.key = true;
		else if (top !== undefined && !(char === ":" || (char === "?" && /\s/.test(header[i + 1] ?? "\n")))) {
			FLOW_PLAIN.lastIndex = i;
			FLOW_PLAIN.exec(header);
			keyRead(header.slice(i, FLOW_PLAIN.lastIndex).replace(/\s+/g, " "), i, FLOW_PLAIN.lastIndex);
			i = Math.max(i, FLOW_PLAIN.lastIndex - 1);
		}
		last = header[i];
	}
	if (twice.length === 0) return header;
	let text = "";
	let at = 0;
	for (const [start, end, name] of twice.sort((a, b) => a[0] - b[0])) {
		text += `${header.slice(at, start)}${start}_twice`;
		renamed.set(`${start}_twice`, name);
		at = end;
	}
	return text + header.slice(at);
}

/** `value` as PyYAML keeps it: of a key given twice below the top level, the last only, the earlier ones, renamed for
 * Obsidian's reading (`renamed`: `nestedLastOfEach`, `flowLastOfEach`), dropped; an alias the same copy again. For
 * the values the messages show, and the fields read for who may see the note. */
function lastKept(value: unknown, renamed: ReadonlyMap<string, string>, copies = new Map<object, unknown>()): unknown {
	if (renamed.size === 0 || value === null || typeof value !== "object" || value instanceof Date) return value;
	const known = copies.get(value);
	if (known !== undefined) return known;
	if (Array.isArray(value)) {
		const list: unknown[] = [];
		copies.set(value, list);
		for (const item of value) list.push(lastKept(item, renamed, copies));
		return list;
	}
	const mapping: Record<string, unknown> = {};
	copies.set(value, mapping);
	for (const [key, item] of Object.entries(value)) if (!renamed.has(key)) mapping[key] = lastKept(item, renamed, copies);
	return mapping;
}

// A node's anchor, which names it and leaves it what it is (`x: &a 2024-02-30` a date), where a tag would make it what
// the tag says: after it a blank or a line break
const NODE_ANCHOR = String.raw`(?:&[^\s,[\]{}]+(?:[ \t]+|[ \t]*\n\s*))?`;
// Where a node starts in a YAML header, its anchor passed over: after a key's colon and a blank, after an explicit key's
// `?` or a list's dash and a blank at a line's start (`- - `, `? - `), `?` in a flow too, not in a plain text (`x: a - 1`
// is one text), after a flow collection's opening or comma (on that line or below), on the line below a key's colon or a
// line's dash; the one start the dates' values and keys and the long numbers are read from
const SCALAR_START = String.raw`(?:(?:^[ \t]*(?:[-?][ \t]+)*[-?]|:)[ \t]+|[[{,]\s*(?:\?[ \t]+)?|(?::|^[ \t]*(?:[-?][ \t]+)*-)[ \t]*\n\s*)${NODE_ANCHOR}`;

/** The first value or key of the note's properties that the daemon's YAML reads as a date or a
 * time no calendar has (`created: 2024-02-30`, `0000-01-01`, `24:00:00`, a key `2021-02-30:`), which
 * Python's datetime refuses and the daemon's load with it (retrieval/vault.py `parse_note`: the note
 * is left out), as `[its keys, the value, whether the key is the date]`, or null. Obsidian gives such
 * a value or key as text, quoted or not: its field's lines in `header`, the YAML as written, tell; a
 * field the daemon reads as the text written (`TEXT_FIELDS`, and lists in them) is text either way,
 * but not the keys of a mapping in it, which PyYAML reads as any key. A key given twice below the top level, renamed
 * for Obsidian's reading (`renamed`), is read and named as written, a value shown as PyYAML keeps it (`lastKept`). */
function impossibleDate(frontmatter: Record<string, unknown>, header: string, renamed: ReadonlyMap<string, string> = new Map()): [string, string, boolean] | null {
	const lines = fieldLines(header);
	const escaped = (text: string): string => text.replace(/[.+]/g, "\\$&");
	// the value as a plain scalar where a node starts, up to its end
	const plain = (value: string, written: string): boolean => new RegExp(String.raw`${SCALAR_START}${escaped(value)}(?=[ \t]*(?:$|[,\]}])|[ \t]+#)`, "m").test(written);
	// the key as a plain scalar where a node starts (a flow list's pair too, `[2024-02-30: b]`) or at a line's start, or
	// explicit (`? key`)
	const plainKey = (key: string, written: string): boolean =>
		new RegExp(String.raw`(?:^[ \t]*${NODE_ANCHOR}|${SCALAR_START})${escaped(key)}[ \t]*:(?:[ \t]|$)|^[ \t]*\?[ \t]+${NODE_ANCHOR}${escaped(key)}[ \t]*$`, "m").test(written);
	const unmade = (text: string): boolean => YAML_TIMESTAMP.test(text) && dateInstant(text) === null;
	const read = [new Set<object>(), new Set<object>()]; // each list or mapping once, as text or not: an alias is the same one again
	const find = (value: unknown, keys: string, written: string, asText: boolean): [string, string, boolean] | null => {
		if (typeof value === "string") return !asText && unmade(value) && plain(value, written) ? [keys, value, false] : null;
		if (value === null || typeof value !== "object" || read[Number(asText)].has(value)) return null;
		read[Number(asText)].add(value);
		if (Array.isArray(value)) return value.reduce<[string, string, boolean] | null>((found, item) => found ?? find(item, keys, written, asText), null);
		return Object.entries(value).reduce<[string, string, boolean] | null>((found, [renaming, item]) => {
			const key = renamed.get(renaming) ?? renaming;
			return found ?? (unmade(key) && plainKey(key, written) ? [`${keys}.${key}`, shownValue(lastKept(item, renamed)), true] : find(item, `${keys}.${key}`, written, false));
		}, null);
	};
	return Object.entries(frontmatter).reduce<[string, string, boolean] | null>((found, [key, value]) => {
		if (found) return found;
		const written = lines.get(key) ?? header; // an explicit key (`? key`) is on no line of its own
		return unmade(key) && plainKey(key, written) ? [key, shownValue(value), true] : find(value, key, written, TEXT_FIELDS.includes(key.toLowerCase()));
	}, null);
}

// a plain scalar YAML 1.1 may read as a number, where it starts a node and up to its end; each start tried once, its context last
const LONG_NUMBER = new RegExp(String.raw`(?<![\w.:+-])(?=[-+]?\d)(?<=${SCALAR_START})[-+]?\d[\d_:.]*(?=[ \t]*(?:$|[,\]}])|[ \t]+#)`, "gm");
// the daemon's YAML's int and float (yaml/resolver.py): a decimal int, a base 60 int, a base 60 float
const PY_DECIMAL = /^[-+]?[1-9][\d_]*$/;
const PY_BASE_60_INT = /^[-+]?[1-9][\d_]*(?::[0-5]?\d)+$/;
const PY_BASE_60_FLOAT = /^[-+]?\d[\d_]*(?::[0-5]?\d)+\.[\d_]*$/;

/** Whether Python cannot make the number `text` an int or a float of PyYAML's forms (`_` and a sign allowed), as the
 * daemon's load raises on it: an int() of more than 4,300 digits, a base 60 int of more than 2,400 parts (frontmatter.py
 * `_MAX_BASE_60_PARTS`) or one whose first part is past int()'s bound, a base 60 float of 175 parts or more (past a
 * float's range: OverflowError). Octal, hex and binary ints, decimal floats are free of any bound. */
function pyNumberTooLong(text: string, tag: "int" | "float"): boolean {
	const digits = (part: string): number => part.replace(/[^\d]/g, "").length;
	const parts = text.split(":");
	if (tag === "float") return parts.length > 174;
	if (parts.length > 1) return parts.length > 2400 || digits(parts[0]) > 4300;
	return /^[-+]?[1-9]/.test(text) && digits(text) > 4300;
}

/** The first plain number in the properties that Python cannot make, as `[its top-level key, the number]`, or null:
 * int() refuses more than 4,300 digits (octal, hex and binary are free of it), the daemon a base 60 int of 2,400
 * parts or more before computing it (frontmatter.py `_MAX_BASE_60_PARTS`), and a base 60 float of 175 parts or more
 * overflows; the daemon leaves the note out, where Obsidian's YAML 1.2 gives text or Infinity. A field the daemon
 * reads as the text written (`TEXT_FIELDS`) keeps it text. */
function longNumber(header: string): [string, string] | null {
	const shown = (number: string): string => (number.length <= 40 ? number : `${number.slice(0, 40)}…`);
	for (const [key, written] of fieldLines(header)) {
		if (written.length < 300) continue; // shorter, no number too long
		const asText = TEXT_FIELDS.includes(key.toLowerCase());
		// a text field with no `{`, `?` nor key's colon past its own holds no mapping: its numbers are text
		if (asText && !/[{?]|:(?:[ \t]|$)/m.test(written.slice(written.indexOf(":") + 1))) continue;
		const found: [string, number][] = [];
		const ends = plainEnds(written);
		for (const { 0: number, index } of written.matchAll(LONG_NUMBER)) {
			if (number.length < 300 || !ends(index, index + number.length)) continue;
			const refused = PY_DECIMAL.test(number) || PY_BASE_60_INT.test(number) ? pyNumberTooLong(number, "int") : PY_BASE_60_FLOAT.test(number) && pyNumberTooLong(number, "float");
			const line = written.slice(written.lastIndexOf("\n", index) + 1, index); // not in a quoted text or a comment
			if (!refused || /["'#]/.test(line.replace(QUOTED_ON_LINE, ""))) continue;
			if (!asText) return [key, shown(number)];
			found.push([number, index]);
		}
		const inMapping = found.length === 0 ? -1 : inTextMapping(written, found);
		if (inMapping >= 0) return [key, shown(found[inMapping][0])];
	}
	return null;
}

/** For the lines `written`, whether a plain scalar read from `at` ends at `end`, as PyYAML's scanner reads it (asked in
 * order): a `,`, `]` or `}` ends it in a flow collection only (`x: 111…]` is text), a line's end unless the next line that
 * is not blank goes on with it, no comment, in a block indented past the node's parent, its key or dash (`x: 111…` then
 * `  y` is text). The flow collections open are counted once, left to right, quotes and comments passed over. */
function plainEnds(written: string): (at: number, end: number) => boolean {
	let depth = 0;
	let read = 0;
	let last = "\n"; // the last character read that is not blank
	// where a node starts, a `[`, a `{` or a quote opens one: after `[`, `{` or `,` in a flow, after a line's start, `:`, `?` or `-` and a blank
	const atNode = (): boolean => (depth > 0 && "[{,".includes(last)) || (":?-\n".includes(last) && /\s/.test(written[read - 1] ?? "\n"));
	return (at, end) => {
		for (; read < at; read++) {
			const char = written[read];
			if (char === " " || char === "\t" || (char === "\n" && depth > 0)) continue;
			if (char === "#" && /\s/.test(written[read - 1] ?? "\n")) read = (written.indexOf("\n", read) + 1 || written.length) - 1;
			else if ((char === '"' || char === "'") && atNode()) {
				const quoted = char === '"' ? /"(?:[^"\\]|\\[\s\S])*"/y : /'(?:[^']|'')*'/y;
				quoted.lastIndex = read;
				read = (quoted.test(written) ? quoted.lastIndex : written.length) - 1;
			} else if ((char === "[" || char === "{") && atNode()) depth++;
			else if ((char === "]" || char === "}") && depth > 0) depth--;
			last = written[read];
		}
		const after = /[ \t]*(.?)/y;
		after.lastIndex = end;
		const next = after.exec(written)?.[1] ?? "";
		if (next === "#") return true;
		if (next !== "") return depth > 0 && ",]}".includes(next);
		const below = /(?:[ \t]*\n)*([ \t]*)(\S?)/y;
		below.lastIndex = written.indexOf("\n", end) + 1 || written.length;
		const [, indent, first] = below.exec(written) ?? ["", "", ""];
		if (first === "" || first === "#") return true;
		if (depth > 0) return ",?[]{}".includes(first);
		// the node's parent: the key before it on its line, or its line's last dash, or, alone on its line, the line above's
		let start = written.lastIndexOf("\n", at - 1) + 1;
		let line = written.slice(start, at);
		while (/^[ \t]*(?:&\S+[ \t]*|#.*)?$/.test(line) && start > 0) {
			const above = written.lastIndexOf("\n", start - 2) + 1;
			line = written.slice(above, start - 1);
			start = above;
		}
		const lead = /^[ \t]*(?:-(?:[ \t]+|$))*/.exec(line)?.[0] ?? "";
		const parent = /:(?:[ \t]|$)/.test(line.slice(lead.length)) || !lead.includes("-") ? lead.length : lead.lastIndexOf("-");
		return indent.length <= parent;
	};
}

/** Which of the numbers `found` (as [number, offset]) in a text field's lines `written` are in a mapping, the first of
 * them, or -1: the daemon reads the field's value as the text written, itself and a list's items, but a mapping in it
 * as YAML (frontmatter.py `_as_written`), whose numbers it makes. Each number is made a word Obsidian's reading gives as
 * text, and the field read: where a list or a mapping holds it is where YAML does. */
function inTextMapping(written: string, found: readonly [string, number][]): number {
	const word = "grasbot-nombre-";
	if (written.includes(word)) return -1;
	let marked = "";
	let at = 0;
	for (const [n, [number, index]] of found.entries()) {
		marked += `${written.slice(at, index)}${word}${n}`;
		at = index + number.length;
	}
	const read = yamlOrUndefined(marked + written.slice(at), false);
	const seen = new Set<object>(); // each list or mapping once: an alias is the same one again
	const first = (value: unknown, inside: boolean): number => {
		if (typeof value === "string") return inside && value.startsWith(word) ? Number(value.slice(word.length)) : -1;
		if (value === null || typeof value !== "object" || value instanceof Date || seen.has(value)) return -1;
		seen.add(value);
		const items = Array.isArray(value) ? value : Object.entries(value).flat();
		for (const item of items) {
			const n = first(item, inside || !Array.isArray(value));
			if (n >= 0) return n;
		}
		return -1;
	};
	return read !== null && typeof read === "object" && !Array.isArray(read) ? first(Object.values(read)[0], false) : -1;
}

// A line's start in a YAML header as a block reads it: its indent and list dashes, then an explicit key's `? `
const BLOCK_START = /^[ \t]*(?:-[ \t]+)*(\?(?:[ \t]+|$))?/;
// a key's colon: before a blank, as a block reads it
const KEY_COLON = /:(?:[ \t]+|$)/g;
// a node's tag and anchor, in either order, before its value on the line
const NODE_PROPERTIES = /(?:[!&]\S*[ \t]+)*/y;

/** The length of the tag and anchor at `at` in `line` before a flow collection, which holds its keys hashed still, or 0: none,
 * no flow collection after them, or an `!!omap` or `!!pairs` list, which PyYAML makes a list of pairs of. */
function flowProperties(line: string, at: number): number {
	NODE_PROPERTIES.lastIndex = at;
	const properties = NODE_PROPERTIES.exec(line)?.[0] ?? "";
	const flow = "[{".includes(line[at + properties.length] ?? "#");
	return flow && !/!!(?:omap|pairs)\b|:(?:omap|pairs)>/.test(properties) ? properties.length : 0;
}

/** The first line of a YAML header where a list or a mapping written in flow form (`[a, b]`, `{a: 1}`) is a mapping's
 * key (`{2021-02-30: x}: y`, `? [a]`, `x: {[a]: b}`, `x: [[a]: b]`), or null. PyYAML's SafeConstructor refuses such a
 * key (« found unhashable key »), and the daemon leaves the note out; Obsidian's reading gives it as text. Read once,
 * left to right: quotes, comments and block scalars (`|`, `>`) hold no key. */
function collectionKey(header: string): string | null {
	const lineAt = (at: number): string => header.slice(header.lastIndexOf("\n", at) + 1).split("\n")[0].trim();
	const open: number[] = []; // the flow collections open, by their offset
	let atNode = false; // in flow: where a node starts (after `[`, `{`, `,`, `:`, `?`), so a quote opens a string
	let explicit = false; // the node starts after `? `: a key
	let literal = -1; // in a block scalar: the indent of the line that opens it
	let i = 0;
	while (i < header.length) {
		if (open.length === 0) {
			const end = header.indexOf("\n", i) === -1 ? header.length : header.indexOf("\n", i);
			const line = header.slice(i, end);
			const indent = /^[ \t]*/.exec(line)?.[0].length ?? 0;
			if (literal >= 0 && (line.trim() === "" || indent > literal)) {
				i = end + 1;
				continue;
			}
			literal = -1;
			const start = BLOCK_START.exec(line);
			let at = start?.[0].length ?? 0;
			at += flowProperties(line, at); // `- !!map {[a]: 1}`: a flow node, not a key
			if (start?.[1] === undefined && !"[{#".includes(line[at] ?? "#")) {
				// a key, then its value: a quoted key up to its closing quote, a plain one up to its first `: `
				const quoted = line[at] === '"' ? /"(?:[^"\\]|\\.)*"/y : line[at] === "'" ? /'(?:[^']|'')*'/y : null;
				if (quoted) quoted.lastIndex = at;
				KEY_COLON.lastIndex = quoted?.test(line) ? quoted.lastIndex : at;
				if (KEY_COLON.exec(line)) at = KEY_COLON.lastIndex;
			}
			at += flowProperties(line, at);
			if (/^[|>][-+0-9]*[ \t]*(?:#|$)/.test(line.slice(at))) literal = indent;
			if ((line[at] === '"' || line[at] === "'") && start?.[1] === undefined) {
				// a quoted value, maybe on the lines below: no node in it
				const quoted = line[at] === '"' ? /"(?:[^"\\]|\\[\s\S])*"/y : /'(?:[^']|'')*'/y;
				quoted.lastIndex = i + at;
				if (!quoted.test(header)) return null; // never closed: YAML that does not parse
				i = header.indexOf("\n", quoted.lastIndex) === -1 ? header.length : header.indexOf("\n", quoted.lastIndex) + 1;
				continue;
			}
			if (line[at] !== "[" && line[at] !== "{") {
				i = end + 1;
				continue;
			}
			explicit = start?.[1] !== undefined;
			if (explicit) return line.trim();
			atNode = true;
			open.push(i + at);
			i += at + 1;
			continue;
		}
		const char = header[i];
		if (atNode && (char === '"' || char === "'")) {
			const quoted = (char === '"' ? /"(?:[^"\\]|\\[\s\S])*"/y : /'(?:[^']|'')*'/y);
			quoted.lastIndex = i;
			if (!quoted.test(header)) return null; // never closed: YAML that does not parse
			i = quoted.lastIndex;
			atNode = false;
			continue;
		}
		if (char === "#" && /\s/.test(header[i - 1])) {
			i = header.indexOf("\n", i) === -1 ? header.length : header.indexOf("\n", i);
			continue;
		}
		i++;
		if (char === "[" || char === "{") {
			if (explicit) return lineAt(i - 1);
			open.push(i - 1);
			atNode = true;
		} else if (char === "]" || char === "}") {
			open.pop();
			const after = /[ \t]*:/y;
			after.lastIndex = i;
			// a key's colon: in flow, any; in a block, before a blank, as PyYAML reads it
			if (after.test(header) && (open.length > 0 || /^(?:\s|$)/.test(header.slice(after.lastIndex, after.lastIndex + 1)))) return lineAt(i - 1);
			if (open.length === 0) i = header.indexOf("\n", i) === -1 ? header.length : header.indexOf("\n", i) + 1; // the line's rest is no node
			atNode = false;
			explicit = false;
		} else if (char === "," || char === ":") {
			atNode = true;
			explicit = false;
		} else if (char === "?" && atNode && /[\s]/.test(header[i] ?? "\n")) explicit = true;
		else if (!/\s/.test(char)) {
			atNode = false;
			explicit = false;
		}
	}
	return null;
}

/** PyYAML's bound on an implicit key, from its start to its `:` (yaml/scanner.py `stale_possible_simple_keys`). */
const MAX_KEY = 1024;

/** The first implicit key of a YAML header further from its `:` than PyYAML reads (`MAX_KEY` Python characters, a code
 * point each, from its first token, an anchor or a tag too, on the colon's line), as its first 40 characters, or null.
 * PyYAML forgets such a key and refuses the `:` after it (« could not find expected ':' »): the daemon leaves the note
 * out, where Obsidian's reading takes one in a flow mapping. Read once, left to right, as PyYAML's scanner saves a key:
 * at a block line's node (past its indent, dashes and `? `) or after a block value's colon, at a flow collection's
 * first token or after its `,`, not after a flow `? ` (an explicit key is unbounded); quotes, comments and block
 * scalars hold none. */
function longKey(header: string): string | null {
	if (header.split("\n").every((line) => line.length <= MAX_KEY)) return null;
	let pairs: Uint32Array | null = null; // the surrogate pairs before each offset: a code point is one character to Python
	if (/[\ud800-\udbff]/.test(header)) {
		pairs = new Uint32Array(header.length + 1);
		for (let i = 0; i < header.length; i++) pairs[i + 1] = pairs[i] + (/[\ud800-\udbff]/.test(header[i]) ? 1 : 0);
	}
	const keys: [number, number][] = [[-1, 0]]; // each level's key, the block's first: its start (-1: none), its line's start
	let expecting = false; // the next token starts a key at the innermost level
	let [lineStart, lineIndent, literal] = [0, 0, -1];
	const blockLine = (at: number): number => {
		// a block line: past its indent, dashes and `? `, its first node; a block scalar's line holds none
		lineStart = at;
		const end = header.indexOf("\n", at) === -1 ? header.length : header.indexOf("\n", at);
		const line = header.slice(at, end);
		lineIndent = /^[ \t]*/.exec(line)?.[0].length ?? 0;
		if (literal >= 0 && (lineIndent === line.length || lineIndent > literal)) return end;
		literal = -1;
		expecting = true;
		return at + (BLOCK_START.exec(line)?.[0].length ?? 0);
	};
	const skipped = (from: number, to: number): number => {
		// past what may hold line breaks (a quoted text, a plain one in a flow): the line the next token is on, looked for
		// in what was passed only (from the line's start, each token read the line again: quadratic)
		const lastBreak = header.slice(from, to).lastIndexOf("\n");
		if (lastBreak >= 0) lineStart = from + lastBreak + 1;
		return to;
	};
	let i = blockLine(0);
	while (i < header.length) {
		const char = header[i];
		const depth = keys.length - 1;
		if (char === "\n") i = depth === 0 ? blockLine(i + 1) : skipped(i, i + 1);
		else if (char === " " || char === "\t" || char === "\r") i++;
		else if (char === "#" && /\s/.test(header[i - 1] ?? "\n")) i = header.indexOf("\n", i) === -1 ? header.length : header.indexOf("\n", i);
		else if (depth > 0 && char === ",") {
			keys[depth] = [-1, 0];
			expecting = true;
			i++;
		} else if (depth > 0 && (char === "]" || char === "}")) {
			keys.pop();
			expecting = false;
			i++;
		} else if (char === "?" && /\s/.test(header[i + 1] ?? "\n")) {
			keys[depth] = [-1, 0];
			expecting = depth === 0; // a simple key after a `? ` in a block only
			i++;
		} else if (char === ":" && (depth > 0 || /\s/.test(header[i + 1] ?? "\n"))) {
			const [start, line] = keys[depth];
			if (start >= 0 && line === lineStart && i - start - (pairs === null ? 0 : pairs[i] - pairs[start]) > MAX_KEY) {
				return `${[...header.slice(start, start + 80)].slice(0, 40).join("")}…`;
			}
			keys[depth] = [-1, 0];
			expecting = depth === 0; // a simple key after a value's colon in a block only
			i++;
		} else if (depth === 0 && expecting && (char === "|" || char === ">")) {
			literal = lineIndent; // a block scalar: its lines hold no key
			i = header.indexOf("\n", i) === -1 ? header.length : header.indexOf("\n", i);
		} else {
			if (expecting) keys[depth] = [i, lineStart];
			expecting = false;
			if (char === "[" || char === "{") {
				keys.push([-1, 0]);
				expecting = true;
				i++;
			} else if (char === '"' || char === "'") {
				const quoted = char === '"' ? /"(?:[^"\\]|\\[\s\S])*"/y : /'(?:[^']|'')*'/y;
				quoted.lastIndex = i;
				if (!quoted.test(header)) return null; // never closed: YAML that does not parse
				i = skipped(i, quoted.lastIndex);
			} else if (char === "&" || char === "!" || char === "*") {
				const name = /[^\s,[\]{}]*/y; // an anchor, a tag or an alias: the node after it is not saved again
				name.lastIndex = i + 1;
				name.test(header);
				i = name.lastIndex;
			} else {
				const plain = depth > 0 ? FLOW_PLAIN : BLOCK_PLAIN;
				plain.lastIndex = i;
				plain.test(header);
				i = skipped(i, Math.max(plain.lastIndex, i + 1));
			}
		}
	}
	return null;
}

// What PyYAML's SafeConstructor makes of a scalar an explicit tag (`!!bool`, `!!timestamp`) names, as the daemon's
// load does: a value it cannot make raises, and the daemon leaves the note out (retrieval/vault.py `parse_note`)
const PY_BOOL: Record<string, boolean> = { yes: true, no: false, true: true, false: false, on: true, off: false };
// YAML 1.1's timestamp, which an explicit `!!timestamp` is read by (yaml/constructor.py `timestamp_regexp`)
const PY_TIMESTAMP = /^(\d{4})-(\d\d?)-(\d\d?)(?:(?:[Tt]|[ \t]+)(\d\d?):(\d\d):(\d\d)(?:\.(\d*))?(?:[ \t]*(Z|([-+])(\d\d?)(?::(\d\d))?))?)?$/;
const SCALAR_TAGS = ["null", "bool", "int", "float", "binary", "timestamp", "str"];
const COLLECTION_TAGS: Record<string, "seq" | "map"> = { seq: "seq", omap: "seq", pairs: "seq", map: "map", set: "map" };

/** A tagged number Python cannot make (`pyNumberTooLong`): the daemon says it is too long, not that the tag makes nothing. */
class NumberTooLong extends RangeError {}

/** `text` read as Python's `int()` reads one of its parts: digits of `base`, a sign first. */
function pyInt(text: string, base = 10): number {
	const digits = { 2: "[01]", 8: "[0-7]", 10: "\\d", 16: "[\\da-fA-F]" }[base] ?? "\\d";
	if (!new RegExp(`^[-+]?${digits}+$`).test(text)) throw new RangeError(NOTE_TEST.yamlNotLoaded);
	return Number.parseInt(text, base);
}

/** A tagged scalar's value as SafeConstructor makes it (`construct_yaml_bool`, `_int`, `_float`, `_timestamp`, `_null`),
 * or a throw where it raises; `asText`: a field the daemon reads as the text written, where a tag YAML would give the
 * text anyway (`!!timestamp 2021-02-30`) leaves it text (frontmatter.py `_as_written`). */
function taggedScalar(tag: string, text: string, asText: boolean): unknown {
	if (tag === "null") return null;
	if (tag === "str" || tag === "binary") return text;
	if (tag === "bool") {
		const value = PY_BOOL[text.toLowerCase()];
		if (value === undefined) throw new RangeError(NOTE_TEST.yamlNotLoaded);
		return value;
	}
	if (tag === "int" || tag === "float") {
		let value = text.replace(/_/g, "");
		if (tag === "float") value = value.toLowerCase();
		if (value === "") throw new RangeError(NOTE_TEST.yamlNotLoaded);
		const sign = value[0] === "-" ? -1 : 1;
		if ("+-".includes(value[0])) value = value.slice(1);
		if (pyNumberTooLong(value, tag)) throw new NumberTooLong(NOTE_TEST.yamlNotLoaded);
		if (tag === "float") {
			if (value === ".inf" || value === ".nan") return value === ".inf" ? sign * Infinity : NaN;
			const float = (part: string): number => {
				if (!/^\s*[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|inf(?:inity)?|nan)\s*$/.test(part)) throw new RangeError(NOTE_TEST.yamlNotLoaded);
				return Number(part.replace(/inf(?:inity)?/, "Infinity").replace("nan", "NaN"));
			};
			return sign * (value.includes(":") ? value.split(":").reduce((sum, part) => sum * 60 + float(part), 0) : float(value));
		}
		if (value === "0") return 0;
		if (value.startsWith("0b")) return sign * pyInt(value.slice(2), 2);
		if (value.startsWith("0x")) return sign * pyInt(value.slice(2), 16);
		if (value[0] === "0") return sign * pyInt(value, 8);
		return sign * (value.includes(":") ? value.split(":").reduce((sum, part) => sum * 60 + pyInt(part), 0) : pyInt(value));
	}
	// timestamp
	if (asText && YAML_TIMESTAMP.test(text)) return text;
	const m = PY_TIMESTAMP.exec(text);
	if (!m) throw new RangeError(NOTE_TEST.yamlNotLoaded);
	const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
	const wall = utcTime(year, month - 1, day, hour, minute, second, Number((m[7] ?? "").padEnd(3, "0").slice(0, 3)));
	const check = new Date(wall);
	const offset = m[9] === undefined ? 0 : (m[9] === "-" ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11] ?? 0));
	if (year < 1 || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59 || Math.abs(offset) >= 24 * 60) {
		throw new RangeError(NOTE_TEST.yamlNotLoaded);
	}
	return new Date(wall - offset * 60_000);
}

// An explicit tag (`!!bool`, `!<tag:…>`, `!local`, `!`), and an anchor after it. A verbatim tag holds no white space, as
// YAML reads it: `!<c, d: !!int abc>` is no tag, the `!!int` after it is, and an unclosed `!<` is not read to its line's end
const TAG = /(?<=^|[\s[{,])(!(?:<[^>\s]*>|[\w!./:%;#?@&=+$~*'()-]*))(?:[ \t]+&\S+)?(?:[ \t]+|(?=\n|$))/gm;
// where YAML reads a node, before a tag on its line: its start, list dashes, `?`, or one key's colon (an anchor after any);
// a plain key runs to the colon, its blanks in it: a lazy key before `[ \t]*:` tried each of its lengths against the blanks
// after it (300 blanks before each of 50 tags: 9 ms a line)
const NODE_START = /^[ \t]*(?:-[ \t]+)*(?:\?[ \t]+|(?:"[^"\n]*"[ \t]*|'[^'\n]*'[ \t]*|[^\s"'#:!&*-][^:#\n]*):[ \t]+)?(?:&\S+[ \t]+)?$/;
// how far into a line a tag, and after it its value, are read: each tag costs this much at most, so a line of
// a million `! ` is read in linear time (a value so long is none a tag makes: no yes, no number, no date)
const TAG_REACH = 400;

// how much of the lines below a tag (`x: !!omap`) is read for its node's shape: a longer node is not read
const BLOCK_REACH = 10 * TAG_REACH;

/** The node on the lines below a tag on a line indented `indent`, as YAML reads it there: the lines indented
 * further, comments and blank lines among them, or a list at the same indent after a key's colon (`afterKey`);
 * null when there is none, undefined when it runs past `below`'s end (`BLOCK_REACH`), not read. */
function nodeBelow(below: string, indent: number, afterKey: boolean): string | null | undefined {
	const lines = below.split("\n");
	let taken = 0;
	for (const [n, line] of lines.entries()) {
		const own = /^[ \t]*/.exec(line)?.[0].length ?? 0;
		const inside = line.trim() === "" || line.trim().startsWith("#") || own > indent || (afterKey && own === indent && /^-(?:[ \t]|$)/.test(line.slice(own)));
		if (!inside) break;
		if (n === lines.length - 1 && below.length === BLOCK_REACH) return undefined;
		if (line.trim() !== "" && !line.trim().startsWith("#")) taken = n + 1;
	}
	return taken === 0 ? null : lines.slice(0, taken).join("\n");
}

/** The flow collection `text` opens (`[a]` of `[a]], b]`), up to the bracket that closes it outside quotes, or null when `text` does not close it. */
function flowNode(text: string): string | null {
	let depth = 0;
	for (let i = 0; i < text.length; i++) {
		const quoted = text[i] === '"' ? /"(?:[^"\\]|\\.)*"/y : text[i] === "'" && /[[{,:\s]/.test(text[i - 1]) ? /'(?:[^']|'')*'/y : null;
		if (quoted) {
			quoted.lastIndex = i;
			if (quoted.test(text)) i = quoted.lastIndex - 1;
		} else if (text[i] === "[" || text[i] === "{") depth++;
		else if ((text[i] === "]" || text[i] === "}") && --depth === 0) return text.slice(0, i + 1);
	}
	return null;
}

/** Whether a node Obsidian's reading gives (`parseYaml`, without its tag) has the shape PyYAML's SafeConstructor
 * makes `tag`'s value of (`construct_yaml_omap`, `_pairs`, `_set`), where it raises otherwise: `!!omap` and
 * `!!pairs` a list of mappings of one key each, `!!set` and `!!map` a mapping, `!!seq` a list. */
function taggedShape(tag: string, node: unknown): boolean {
	const isMapping = (value: unknown): value is object => value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date);
	if (COLLECTION_TAGS[tag] === "map") return isMapping(node);
	return Array.isArray(node) && (tag === "seq" || node.every((item) => isMapping(item) && Object.keys(item).length === 1));
}

/** Each explicit tag of a YAML header on a node of one line, as `[its top-level key, what SafeConstructor makes of
 * it]`, and the first line whose tag it cannot make (one it does not know, `!!bool 0`, `!!timestamp 2021-02-30`,
 * `!!str [a]`), where the daemon's load raises, or null. A tag whose node is on the lines below is not read. */
function taggedValues(header: string): { values: [string, unknown][]; refused: string | null } {
	const values: [string, unknown][] = []; // the top-level key, or "" for a node inside a field
	let key: string | undefined;
	let [lineStart, lineEnd] = [0, -1];
	const tops = header.matchAll(/(?<![^\n])[^\s#-][^\n]*/g); // the top-level lines, whose keys the lines below belong to
	let top = tops.next();
	let budget = 50 * BLOCK_REACH; // the lines below 50 tags read at most: 50,000 `x: !!omap` blocks in 1 MB read in linear time
	let number = ""; // a tagged number read whole, for its message
	for (const m of header.matchAll(TAG)) {
		if (m.index > lineEnd && lineEnd !== header.length) {
			lineStart = header.lastIndexOf("\n", m.index) + 1; // the lines between are read once: the search stops at the last line end
			lineEnd = header.indexOf("\n", m.index);
			if (lineEnd === -1) lineEnd = header.length;
		}
		if (m.index - lineStart > TAG_REACH) continue;
		const line = header.slice(lineStart, Math.min(lineEnd, lineStart + 2 * TAG_REACH)); // as far as a tag is read
		for (; !top.done && top.value.index <= lineStart; top = tops.next()) {
			// the field the line is in, a list item's below its key too; a tag, an anchor or an alias opens a node, not a key
			key = "!&*".includes(top.value[0][0]) ? undefined : fieldKey(top.value[0].slice(0, 2 * TAG_REACH));
		}
		const before = header.slice(lineStart, m.index);
		const bare = before.replace(QUOTED_ON_LINE, "");
		const inFlow = /[[{]/.test(bare);
		if (/["'#]/.test(bare) || !(NODE_START.test(before) || (inFlow && /[[{,:][ \t]*(?:&\S+[ \t]+)?$/.test(before)))) continue; // in a string, a comment, a plain text
		const written = m[1];
		const rest = header.slice(m.index + m[0].length, Math.min(lineEnd, m.index + m[0].length + TAG_REACH));
		const tag = written === "!" ? "!" : written.startsWith("!!") ? written.slice(2) : written.startsWith("!<tag:yaml.org,2002:") ? written.slice(20, -1) : "?";
		const fieldOwn = key !== undefined && TEXT_FIELDS.includes(key.toLowerCase()) && (/^[^\s#-]/.test(line) || /^[ \t]*-[ \t]/.test(line)); // frontmatter.py `_as_written`'s reach
		try {
			if (tag !== "!" && !SCALAR_TAGS.includes(tag) && COLLECTION_TAGS[tag] === undefined) throw new RangeError(NOTE_TEST.yamlNotLoaded);
			if (tag === "!" || (rest !== "" && "|>*".includes(rest[0]))) continue; // no tag to read, a block scalar, an alias
			if (rest === "" || rest.startsWith("#") || (inFlow && /^[,\]}]/.test(rest))) {
				const indent = (text: string): number => /^[ \t]*/.exec(text)?.[0].length ?? 0;
				const below = inFlow ? null : nodeBelow(header.slice(lineEnd + 1, lineEnd + 1 + BLOCK_REACH), indent(line), NODE_START.test(before) && /:[ \t]+$/.test(before));
				if (below !== null) {
					// its node on the lines below: a collection tag's shape is read, a scalar tag's node must be no collection
					const node = below === undefined || (budget -= BLOCK_REACH) < 0 ? undefined : yamlOrUndefined(below, false);
					const collection = node !== null && typeof node === "object" && !(node instanceof Date);
					if (node !== undefined && (COLLECTION_TAGS[tag] === undefined ? collection : !taggedShape(tag, node))) throw new RangeError(NOTE_TEST.yamlNotLoaded);
					continue;
				}
				if (COLLECTION_TAGS[tag] !== undefined) throw new RangeError(NOTE_TEST.yamlNotLoaded);
				values.push([/^[^\s#-]/.test(line) && !inFlow ? (key ?? "") : "", taggedScalar(tag, "", false)]);
				continue;
			}
			if (rest[0] === "[" || rest[0] === "{") {
				if (COLLECTION_TAGS[tag] !== (rest[0] === "[" ? "seq" : "map")) throw new RangeError(NOTE_TEST.yamlNotLoaded);
				// its items may go on the lines below (`x: !!omap [` then `  a`), as PyYAML reads them: read up to BLOCK_REACH, charged to the budget
				const after = m.index + m[0].length;
				const node = flowNode(rest) ?? ((budget -= BLOCK_REACH) < 0 ? null : flowNode(header.slice(after, after + BLOCK_REACH)));
				const written = node === null ? undefined : yamlOrUndefined(node, false); // undefined: not closed within reach, or not read
				if (written !== undefined && !taggedShape(tag, written)) throw new RangeError(NOTE_TEST.yamlNotLoaded);
				continue;
			}
			if (COLLECTION_TAGS[tag] !== undefined) throw new RangeError(NOTE_TEST.yamlNotLoaded);
			let text: string;
			const whole = (tag === "int" || tag === "float") && lineEnd > m.index + m[0].length + TAG_REACH ? numberValue(header, m.index + m[0].length, inFlow) : null;
			if (whole !== null) text = whole;
			else if (rest[0] === '"' || rest[0] === "'") {
				const closed = rest[0] === '"' ? /^"(?:[^"\\]|\\.)*"/.exec(rest) : /^'(?:[^']|'')*'/.exec(rest);
				if (!closed) continue; // on lines below
				const read = rest[0] === '"' ? yamlOrUndefined(closed[0]) : undefined;
				text = typeof read === "string" ? read : closed[0].slice(1, -1).replace(/''/g, "'");
			} else text = (inFlow ? rest.split(/[,\]}]|: | #/)[0] : rest.split(" #")[0]).trim();
			number = text;
			values.push([/^[^\s#-]/.test(line) && !inFlow ? (key ?? "") : "", taggedScalar(tag, text, fieldOwn && !/^"|^'/.test(rest))]);
		} catch (error) {
			if (!(error instanceof NumberTooLong)) return { values, refused: NOTE_TEST.tagRefused(line.trim()) };
			// a text field's own value, plain, its tag the type YAML reads it as anyway: the text written (frontmatter.py `_as_written`)
			const keyColons = bare.match(/:(?:[ \t]|$)/g)?.length ?? 0;
			const ownValue = fieldOwn && !/^["']/.test(rest) && !bare.includes("{") && keyColons === (/^[^\s#-]/.test(line) ? 1 : 0);
			if (!ownValue) return { values, refused: NOTE_TEST.numberTooLong(key ?? "", number.length <= 40 ? number : `${number.slice(0, 40)}…`) };
		}
	}
	return { values, refused: null };
}

// a tagged number's value read whole: the characters of a number only (a tag is none of them, so each tag reads its own),
// quoted or not, then where its node ends (an empty last branch, not `?`: a group made optional that matches nothing
// is not taken, and a value at its line's end read as one going on)
const NUMBER_VALUE = /(['"]?)([\w.:+-]*)\1(?:(?<end>[ \t]+#|[ \t]*(?![^\n]))|(?<flow>[ \t]*[,\]}])|)/y;

/** The number a tag's value at `at` is, read whole past `TAG_REACH`, or null when it holds other characters from its
 * start; a plain one that goes on with them is no number, which the daemon's int() and float() refuse (a throw). */
function numberValue(header: string, at: number, inFlow: boolean): string | null {
	NUMBER_VALUE.lastIndex = at;
	const read = NUMBER_VALUE.exec(header);
	if (read === null || read[2] === "") return null;
	const ends = read.groups?.end !== undefined || (inFlow && read.groups?.flow !== undefined);
	if (!ends && read[1] === "") throw new RangeError(NOTE_TEST.yamlNotLoaded);
	return ends ? read[2] : null;
}

/** `fields` with the values explicit tags give the keys that say who reads the note, as the daemon's YAML makes them
 * (`draft: !!null x` is no value, `publishDate: !!timestamp 2999-01-01` a date), where Obsidian's reading may not. */
function withTagged(fields: Record<string, unknown> | undefined, values: [string, unknown][]): Record<string, unknown> | undefined {
	const read = values.filter(([key]) => key !== "" && saysWhoReads(key) && fields !== undefined && key in fields);
	return read.length === 0 ? fields : { ...fields, ...Object.fromEntries(read) };
}

/** `yaml` with the line ends PyYAML reads and Obsidian's reading does not (U+2028, U+2029, U+0085: YAML 1.1's
 * line breaks) made line feeds: the lines the daemon's YAML reads (`created:\u2028  2024-02-30` is a date below its key). */
function pyLines(yaml: string): string {
	return yaml.replace(/[\u2028\u2029\x85]/g, "\n");
}

// an explicit set's tag on a mapping, flow or on the lines below (`!!set {a: 1}`, `!!set` then `  a: 1`): PyYAML makes
// the set of its keys whatever their values, where Obsidian's reading refuses values that are not null
const SET_TAG = /(?<=^|[\s[{,])(?:!!set|!<tag:yaml\.org,2002:set>)(?=[ \t]*(?:\{|#|$))/gm;

/** `parseYaml`'s reading of `text`, where it refuses a set whose keys have values (« Set items must all have null
 * values »), which the daemon's load serves: the set read as the mapping it is written as, its keys the set's; a flow
 * mapping's key given twice renamed (`flowLastOfEach`, into `renamed`). */
function setsRead(text: string, renamed?: Map<string, string>): unknown {
	try {
		return parseYaml(text);
	} catch (error) {
		const mapped = flowLastOfEach(text, renamed).replace(SET_TAG, "!!map");
		if (mapped === text) throw error;
		return parseYaml(mapped);
	}
}

/** `parseYaml`'s reading of a block Obsidian shows as text, which throws where the daemon's
 * load_frontmatter raises too (visibility.py `_yaml_or_broken`): lists or mappings nested past
 * its bound, an unquoted date no calendar has; the daemon reads such a block as broken YAML. A key
 * given twice, which Obsidian's reading refuses, is read as PyYAML reads it, the last kept (as
 * the properties', `privateReason`): whether one that says who reads the note is, `readerTwice` tells. */
function loadedYaml(written: string): unknown {
	const block = pyLines(written);
	const renamed = new Map<string, string>();
	const meta: unknown = setsRead(nestedLastOfEach(lastOfEach(block)[0], renamed), renamed);
	if (meta === null || typeof meta !== "object" || Array.isArray(meta)) return meta;
	const fields = meta as Record<string, unknown>;
	if (yamlNestedPast(fields, MAX_DEPTH) || yamlExpandsPast(fields, block) || impossibleDate(fields, block, renamed) || collectionKey(block) !== null || longNumber(block) !== null || longKey(block) !== null) throw new RangeError(NOTE_TEST.yamlNotLoaded);
	const tagged = block.includes("!") ? taggedValues(block) : null;
	if (tagged?.refused) throw new RangeError(NOTE_TEST.yamlNotLoaded);
	const kept = lastKept(fields, renamed) as Record<string, unknown>;
	return tagged ? withTagged(kept, tagged.values) : kept;
}

/** The first key that says who reads the note given twice at the top level of YAML `written`, which keeps the note
 * private whichever value YAML keeps (visibility.py `_written_twice`), or undefined. */
function readerTwice(written: string): string | undefined {
	return lastOfEach(pyLines(written))[1].find((key) => saysWhoReads(key));
}

// What the author hid, as the daemon reads it (retrieval/markdown.py `_HIDDEN`): code first, where
// a `%%` is shown, then a comment, one left open running to the end of the note. A line starts after `\n` only, as
// Python's `^` and `$` read: JavaScript's with the m flag read U+2028 and U+2029 as line ends too, and closed a
// fence at `a\u2028```` the daemon reads on, so a `%%` after it hid a lower block the daemon reads
const FENCED = String.raw`(?<![^\n]) {0,3}(?<ticks>\`{3,})[^\`\n]*(?![^\n])[\s\S]*?(?<![^\n]) {0,3}\k<ticks>\`*[ \t]*(?![^\n])|(?<![^\n]) {0,3}(?<tildes>~{3,})[^\n]*(?![^\n])[\s\S]*?(?<![^\n]) {0,3}\k<tildes>~*[ \t]*(?![^\n])`;
const SPAN = String.raw`(?<![\\\`])(?<span>\`+)(?!\`)[^\n]*?(?<!\`)\k<span>(?!\`)`;
const HIDDEN = new RegExp(String.raw`(?<code>${FENCED}|${SPAN})|%%[\s\S]*?(?:%%|(?![\s\S]))|<!--[\s\S]*?(?:-->|(?![\s\S]))`, "gm");

const FENCES = new RegExp(FENCED, "gm");
// a fence's line: up to three spaces, a run of ` or ~ (three or more), what follows on the line
const FENCE_LINE = /(?<![^\n]) {0,3}(`{3,}|~{3,})([^\n]*)(?![^\n])/g;

/** `text` with each fence that nothing closes masked, its offsets kept, as the daemon reads code
 * (retrieval/markdown.py `fences_read_once`, which says how): the patterns then read no fence
 * there at once, where each such line was tried against the rest of the note (10,000 « ```python »
 * lines took seconds, for no code). The same code either way. */
function fencesReadOnce(text: string): string {
	if (!text.includes("```") && !text.includes("~~~")) return text;
	const lines = [...text.matchAll(FENCE_LINE)];
	const above: number[] = []; // the longest run of tildes of the fence lines above each
	let tildes = 0;
	for (const line of lines) {
		above.push(tildes);
		if (line[1][0] === "~") tildes = Math.max(tildes, line[1].length);
	}
	const longest: Record<string, number> = { "`": 0, "~": 0 }; // the longest line below that may close a fence of this character
	const masked: [number, number, string][] = [];
	for (let n = lines.length - 1; n >= 0; n--) {
		const [whole, run, rest] = lines[n];
		const start = lines[n].index + whole.length - run.length - rest.length;
		const end = start + run.length;
		if (/^[ \t]*$/.test(rest)) {
			const kept = Math.max(3, longest["~"], above[n]);
			if (run[0] === "~" && run.length > kept) masked.push([start + kept, end, " "]);
			longest[run[0]] = Math.max(longest[run[0]], run.length);
		} else if (run[0] === "~" && longest["~"] < 3) masked.push([start, end, "\0"]);
		else if (run[0] === "~" && run.length > longest["~"]) masked.push([start + longest["~"], end, "\0"]);
		else if (run[0] === "`" && run.length > longest["`"] && !rest.includes("`")) masked.push([start, end, "\0"]);
	}
	let out = "";
	let at = 0;
	for (const [start, end, fill] of masked.reverse()) {
		out += text.slice(at, start) + fill.repeat(end - start);
		at = end;
	}
	return out + text.slice(at);
}

/** `body` without its comments, each one space or one line end as the daemon's `strip_hidden`.
 * A `%%` or a `<!--` in code is shown, not hidden: in a fence or a span (`HIDDEN` reads them
 * first), or in the code of a quote, a list item or indentation, which the search skips. */
function stripHidden(body: string): string {
	if (!body.includes("%%") && !body.includes("<!--")) return body;
	const read = fencesReadOnce(body);
	const code = containedCode(
		body,
		[...read.matchAll(FENCES)].map((m): [number, number] => [m.index, m.index + m[0].length]),
	);
	let out = "";
	let at = 0;
	let k = 0; // the first piece of code that does not end before the match
	HIDDEN.lastIndex = 0;
	for (let m = HIDDEN.exec(read); m !== null; m = HIDDEN.exec(read)) {
		while (k < code.length && code[k][1] <= m.index) k++;
		if (k < code.length && code[k][0] <= m.index) {
			HIDDEN.lastIndex = code[k][1]; // inside code: the search goes on after it
			continue;
		}
		const covered = body.slice(m.index, m.index + m[0].length);
		out += body.slice(at, m.index) + (m.groups?.code !== undefined ? covered : covered.includes("\n") ? "\n" : " ");
		at = HIDDEN.lastIndex = Math.max(m.index + m[0].length, m.index + 1);
	}
	return out + body.slice(at);
}
// Code inside a block quote or a list item, read line by line as CommonMark does, as the daemon
// reads it (retrieval/markdown.py `_contained_code`, whose comments say how): a quote's or a list
// item's own lines are prose, only indented code and fences inside them are code
const LIST_MARKER = /(?:[-*+]|\p{Nd}{1,9}[.)])(?=[ \t]|$)/uy;
const ATX = /#{1,6}(?:[ \t]|$)/y;
const BREAK = /(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|=+[ \t]*)$/y; // a rule, or a Setext underline
const OPENS = /(`{3,})[^`]*$|(~{3,})/y;
const QUOTE = -1; // a quote in the stack of containers; an item is its content column

/** `pattern` matched at `at` in `line` only, as Python's `pattern.match(line, at)`. */
function matchAt(pattern: RegExp, line: string, at: number): RegExpExecArray | null {
	pattern.lastIndex = at;
	return pattern.exec(line);
}

/** [offset, column] of the first character from `at` that is not a space or a tab (a tab to the next multiple of four). */
function skipBlank(line: string, at: number, column: number): [number, number] {
	for (; at < line.length && (line[at] === " " || line[at] === "\t"); at++) column += line[at] === " " ? 1 : 4 - (column % 4);
	return [at, column];
}

/** [offset, column, content column] past the quote mark at `mark`: one space or tab after it is the mark's own. */
function pastQuote(line: string, mark: number, column: number): [number, number, number] {
	const at = mark + 1;
	return [at, column + 1, at < line.length && (line[at] === " " || line[at] === "\t") ? column + 2 : column + 1];
}

/** How many of `stack`'s containers `line` continues: [that many, offset, column, content column]. */
function continued(line: string, stack: readonly number[]): [number, number, number, number] {
	let at = 0;
	let column = 0;
	let content = 0;
	let [first, firstColumn] = skipBlank(line, at, column);
	for (let depth = 0; depth < stack.length; depth++) {
		if (stack[depth] === QUOTE) {
			if (firstColumn - content > 3 || first === line.length || line[first] !== ">") return [depth, at, column, content];
			[at, column, content] = pastQuote(line, first, firstColumn);
			[first, firstColumn] = skipBlank(line, at, column);
		} else if (first < line.length && firstColumn < stack[depth]) return [depth, at, column, content];
		else content = stack[depth];
	}
	return [stack.length, at, column, content];
}

/** The index of the line after `i` that closes the fence `run` opens inside `stack`; -(the first line outside them, or the end) when none does. */
function fenceClosed(lines: string[], i: number, stack: readonly number[], run: string): number {
	for (let j = i + 1; j < lines.length; j++) {
		const [depth, at, column, content] = continued(lines[j], stack);
		if (depth < stack.length) return -j;
		const [first, firstColumn] = skipBlank(lines[j], at, column);
		if (firstColumn - content <= 3 && lines[j].startsWith(run, first) && /^[ \t]*$/.test(lines[j].slice(first).replace(run[0] === "`" ? /^`+/ : /^~+/, ""))) return j;
	}
	return -lines.length;
}

/** The code blocks `FENCED` does not find, as [start, end] (their lines without the last newline):
 * indented code, and fences in a quote or indented in a list item; `fences`: `FENCED`'s, in order. */
function containedCode(text: string, fences: readonly [number, number][]): [number, number][] {
	const lines = text.split("\n");
	const starts = [0];
	for (let i = 1; i < lines.length; i++) starts.push(starts[i - 1] + lines[i - 1].length + 1);
	const found: [number, number][] = [];
	const stack: number[] = [];
	let paragraph = false; // the line before is a paragraph's, which the next one may continue
	let codeDepth = -1; // the containers an indented block is in, while in one
	const failed = new Map<string, [number, number]>(); // character and depth: [run, line] no closer was found before
	let next = 0;
	let i = 0;
	while (i < lines.length) {
		const line = lines[i];
		const start = starts[i];
		i++;
		while (next < fences.length && start >= fences[next][1]) next++;
		const here = continued(line, stack);
		const depth = here[0];
		let [, at, column, content] = here;
		if (next < fences.length && start >= fences[next][0]) {
			if (start === fences[next][0]) stack.length = depth;
			paragraph = false;
			codeDepth = -1;
			continue;
		}
		let [first, firstColumn] = skipBlank(line, at, column);
		if (codeDepth === stack.length && stack.length === depth && (first === line.length || firstColumn - content >= 4)) {
			if (first < line.length) found[found.length - 1][1] = start + line.length;
			continue;
		}
		codeDepth = -1;
		const opened: number[] = [];
		while (first < line.length && firstColumn - content < 4) {
			if (line[first] === ">") {
				opened.push(QUOTE);
				[at, column, content] = pastQuote(line, first, firstColumn);
			} else {
				const marker = matchAt(BREAK, line, first) === null ? matchAt(LIST_MARKER, line, first) : null;
				if (marker === null) break;
				const end = first + marker[0].length;
				// a column per character, as the daemon's Python counts them: a digit outside the BMP (`𝟙.`) is two UTF-16 units, one column
				const width = [...marker[0]].length;
				const [after, afterColumn] = skipBlank(line, end, firstColumn + width);
				const empty = after === line.length;
				if (paragraph && depth === stack.length && opened.length === 0 && (empty || (/\p{Nd}/u.test(marker[0][0]) && marker[0].slice(0, -1) !== "1"))) break; // an item that cannot interrupt a paragraph
				[at, column] = [end, firstColumn + width];
				const gap = afterColumn - column;
				content = column + (empty || gap > 4 ? 1 : gap);
				opened.push(content);
			}
			[first, firstColumn] = skipBlank(line, at, column);
		}
		const blank = first === line.length;
		const run = !blank && firstColumn - content < 4 ? matchAt(OPENS, line, first) : null;
		const lazy = paragraph && depth < stack.length && opened.length === 0 && !blank && run === null;
		if (lazy && (firstColumn - content >= 4 || (matchAt(ATX, line, first) === null && matchAt(BREAK, line, first) === null))) continue; // a paragraph's lazy continuation
		stack.length = depth;
		stack.push(...opened);
		if (blank) {
			paragraph = false;
			continue;
		}
		if (firstColumn - content >= 4 && !(paragraph && opened.length === 0)) {
			found.push([start, start + line.length]);
			codeDepth = stack.length;
			paragraph = false;
			continue;
		}
		if (run !== null) {
			const mark = run[1] ?? run[2];
			const known = failed.get(`${mark[0]}${stack.length}`);
			const end = known !== undefined && known[0] <= mark.length && i - 1 < known[1] ? -known[1] : fenceClosed(lines, i - 1, stack, mark);
			if (end >= 0) {
				found.push([start, starts[end] + lines[end].length]);
				i = end + 1;
				paragraph = false;
				continue;
			}
			failed.set(`${mark[0]}${stack.length}`, [mark.length, -end]);
		}
		paragraph = matchAt(ATX, line, first) === null && matchAt(BREAK, line, first) === null;
	}
	return found;
}

const CODE = new RegExp(`${FENCED}|${SPAN}`, "gm");

/** `text` with its code made one space each, as the daemon's prose (retrieval/markdown.py `code_in`,
 * then `code_dropped`): fences, code spans, and the code blocks of quotes, list items and
 * indentation. A quote's or a list item's own lines are prose, where a properties block is read. */
function prose(text: string): string {
	const found = [...fencesReadOnce(text).matchAll(CODE)].map((m): [number, number, boolean] => [m.index, m.index + m[0].length, m.groups?.span === undefined]);
	const blocks = containedCode(
		text,
		found.filter(([, , block]) => block).map(([start, end]): [number, number] => [start, end]),
	).map(([start, end]): [number, number, boolean] => [start, end, true]);
	const codes = [...found, ...blocks].sort((a, b) => a[0] - b[0] || a[1] - b[1] || Number(a[2]) - Number(b[2]));
	let out = "";
	let at = 0;
	for (const [start, end] of codes) {
		if (start < at) continue; // a span on a block's line
		out += `${text.slice(at, start)} `;
		at = end;
	}
	return out + text.slice(at);
}

/** The note's text after its properties, as the daemon reads its body: line ends as it reads
 * them (a file saved on Windows), without what the author hid, which no one reads. */
function shownBody(text: string): string {
	return stripHidden(text.replace(/\r\n?/g, "\n").replace(TOP_FRONTMATTER, ""));
}

// A properties block lower in the note's prose, between two `---` lines (retrieval/visibility.py `_LOWER_BLOCK`). A
// line starts after `\n` only, as Python's `^` and `$`: JavaScript's with the m flag read U+2028 and U+2029 as line
// ends too, and found a block in `Texte.\u2028---` the daemon does not (`(?<![^\n])` and `(?![^\n])` instead)
const LOWER_BLOCK = /(?<![^\n])---[ \t]*\n((?:(?!---[ \t]*(?![^\n]))[^\n]*\n){1,50}?)---[ \t]*(?![^\n])/g;

/** Why a properties block lower in the note (between two `---` lines, a template inserted at
 * the cursor) keeps it private, as the daemon reads it (retrieval/visibility.py
 * `_lower_blocks`), or null. `shown`: the body, read without its code, where a block is an
 * example, not a field; its list items and quotes are prose, and the block's own lines. */
function lowerReason(shown: string, now: number, zone: string): string | null {
	for (const block of prose(shown).matchAll(LOWER_BLOCK)) {
		const fields = block[1];
		const reader = [...fields.matchAll(READER_LINE)].find((line) => saysWhoReads(line[1]));
		if (!reader) continue;
		let meta: unknown = null;
		try {
			meta = loadedYaml(fields);
		} catch {
			// not YAML, but it says who may read the note: private
		}
		const isFields = meta !== null && typeof meta === "object" && !Array.isArray(meta);
		if (!isFields || readerTwice(fields) !== undefined || privateReason(meta as Record<string, unknown>, true, undefined, now, zone) !== null) {
			const written = fields.slice((reader.index ?? 0) + reader[0].length).split(YAML_BREAK)[0].trim();
			// on the lines below its key: in YAML's flow form, as the daemon's `_as_written`
			const below = written === "" && isFields ? (meta as Record<string, unknown>)[reader[1]] : undefined;
			const value = below === undefined || below === null ? written : flowValue(below);
			return NOTE_TEST.lowerBlock(`${reader[1].trim()}: ${value}`.trimEnd());
		}
	}
	return null;
}

/** Why visitors cannot see the note, or null when they can (or it is up to the daemon).
 * `text`: the note's text, for a frontmatter Obsidian does not read (after blank lines), and for
 * what its properties hold unquoted, which Obsidian gives as the daemon does not. */
export function privateReason(
	frontmatter: Record<string, unknown> | undefined,
	defaultPublic?: boolean,
	text?: string,
	now: number = Date.now(),
	zone = "UTC",
): string | null {
	// what keeps the daemon from loading the note, before it reads who may see it: its bounds, then its dates
	const written = text === undefined ? undefined : TOP_FRONTMATTER.exec(text.replace(/\r\n?/g, "\n"))?.[1];
	const header = written === undefined ? "" : pyLines(written);
	const renamed = new Map<string, string>(); // the keys given twice below the top level, renamed for Obsidian's reading
	let earlier: string[] = []; // the earlier fields of a top-level key given twice, which Obsidian's reading refuses
	// a key too long for PyYAML, which Obsidian's reading may take or refuse: said before either
	const tooLong = written === undefined ? null : longKey(header);
	if (tooLong !== null) return NOTE_TEST.keyTooLong(tooLong);
	if (written !== undefined && (frontmatter === undefined || frontmatter === null || header !== written)) {
		// properties Obsidian gives none of (their YAML does not parse, or holds no fields: the daemon leaves the note out),
		// or other lines than the daemon's, which it reads as YAML again, as PyYAML's lines
		let read: unknown;
		const [kept, twice, replaced] = lastOfEach(header);
		earlier = replaced;
		try {
			// a key given twice, which Obsidian's reading refuses, PyYAML reads the last of, at the top level or below it
			read = setsRead(nestedLastOfEach(kept, renamed), renamed);
		} catch {
			// broken YAML; or, on PyYAML's lines, a flow list or a quoted text that goes on below at the key's indent
			// (`x: [a,\u2028b]`), which PyYAML reads and the stand-in refuses: said left out then, never public
			return NOTE_TEST.propertiesInvalid;
		}
		const reader = twice.find((key) => saysWhoReads(key)); // as readerTwice
		if (reader !== undefined) return NOTE_TEST.keyTwice(reader);
		if (read !== null && read !== undefined && (typeof read !== "object" || Array.isArray(read) || read instanceof Date)) return NOTE_TEST.propertiesInvalid;
		frontmatter = read === null || read === undefined ? undefined : (read as Record<string, unknown>);
	}
	if (text !== undefined && frontmatter && yamlNestedPast(frontmatter, MAX_DEPTH)) return NOTE_TEST.propertiesTooDeep;
	if (text !== undefined && frontmatter && yamlExpandsPast(frontmatter, header)) return NOTE_TEST.propertiesExpand;
	const unmade = text !== undefined && frontmatter ? (impossibleDate(frontmatter, header, renamed) ?? earlierDate(earlier)) : null;
	if (unmade) return unmade[2] ? NOTE_TEST.dateKeyImpossible(unmade[0], unmade[1]) : NOTE_TEST.dateImpossible(unmade[0], unmade[1]);
	// past what PyYAML makes before it drops them, the earlier values of a key given twice count no more
	frontmatter = lastKept(frontmatter, renamed) as Record<string, unknown> | undefined;
	const long = text !== undefined && frontmatter && header.length > 300 ? longNumber(header) : null;
	if (long) return NOTE_TEST.numberTooLong(long[0], long[1]);
	const keyed = text !== undefined && frontmatter && /[[{]/.test(header) ? collectionKey(header) : null;
	if (keyed !== null) return NOTE_TEST.collectionKey(keyed);
	const tagged = text !== undefined && frontmatter && header.includes("!") ? taggedValues(header) : null;
	if (tagged?.refused) return tagged.refused;
	if (tagged) frontmatter = withTagged(frontmatter, tagged.values);
	if (text !== undefined && (frontmatter === undefined || frontmatter === null)) {
		const late =
			lateReason(text, defaultPublic, now, zone) ??
			tomlReason(text, now, zone) ??
			jsonReason(text, now, zone) ??
			orgReason(text, now, zone) ??
			commentReason(text, now, zone);
		if (late) return late;
	}
	const given = fieldsNamed(frontmatter, "visibility");
	if (given.length > 1) return NOTE_TEST.visibilityTwice;
	const near = given.length === 0 ? Object.entries(frontmatter ?? {}).find(([key]) => nearlyVisibility(key)) : undefined;
	if (near) return NOTE_TEST.nearlyVisibility(near[0], shownValue(near[1]));
	const publish = fieldsNamed(frontmatter, ...PUBLISH_KEYS).find(
		([key, value]) => publishSaysNo(value) && !(key.trim().toLowerCase() === "published" && isDate(value)),
	);
	if (publish) return NOTE_TEST.publishNo(publish[0], shownValue(publish[1]));
	const draft = fieldsNamed(frontmatter, ...HIDING_KEYS).find(([, value]) => draftSays(value) !== false);
	if (draft) {
		const [key, value] = draft;
		return draftSays(value) ? NOTE_TEST.draftYes(key, shownValue(value)) : NOTE_TEST.draftUnclear(key, shownValue(value));
	}
	const unwritten = unwrittenReason(frontmatter);
	if (unwritten) return unwritten;
	const lower = (): string | null => {
		if (text === undefined) return null;
		const body = shownBody(text);
		// a second block right after the properties, behind spaces or what shows nothing, as the daemon's
		const second = frontmatter === undefined || frontmatter === null ? null : lateReason(body, true, now, zone, true);
		return second ?? lowerReason(body, now, zone);
	};
	if (given.length === 0) return defaultPublic === false ? NOTE_TEST.noVisibilityPrivate : (scheduledReason(frontmatter, now, zone) ?? lower());
	const visibility = given[0][1];
	if (visibility === undefined || visibility === null) return NOTE_TEST.notPublic(""); // `visibility:` left blank: neither public nor private, so private
	const shown = typeof visibility === "string" ? visibility : JSON.stringify(visibility);
	if (shown.trim().toLowerCase() === "public") return scheduledReason(frontmatter, now, zone) ?? lower();
	return NOTE_TEST.notPublic(shown);
}

export async function testNote(note: NoteUnderTest, search: VisitorSearch, options: NoteTestOptions = {}): Promise<NoteTestReport> {
	const slug = noteSlug(note.basename, note.frontmatter);
	const reason = privateReason(note.frontmatter, options.defaultPublic, note.text, Date.now(), options.timeZone);
	if (reason) return { kind: "private", slug, reason };
	const questions = questionsOf(note.frontmatter);
	if (questions.length === 0) return { kind: "no-questions", slug };

	const outcomes: QuestionOutcome[] = [];
	for (const question of questions) {
		const sources = await search(question);
		// by path first: two notes may share a slug (a folder's `index.md` each), and the other
		// one first is not this one first. The daemon's vault may be a folder above Obsidian's
		// (its paths then end with the note's); the slug only when no path says
		const byPath = sources.findIndex((s) => s.path === note.path || s.path.endsWith(`/${note.path}`));
		const index = byPath >= 0 ? byPath : sources.findIndex((s) => s.slug === slug);
		const top = sources[0];
		const best = top ? { slug: top.slug, title: top.title, score: top.score } : null;
		if (index === 0) outcomes.push({ question, status: "first", score: sources[0].score });
		else if (index > 0 && best) {
			outcomes.push({ question, status: "lower", rank: index + 1, score: sources[index].score, beatenBy: best });
		} else outcomes.push({ question, status: "absent", beatenBy: best });
	}
	const neverFound = outcomes.every((o) => o.status === "absent");
	const noVisibility = note.frontmatter?.visibility === undefined || note.frontmatter?.visibility === null;
	// a daemon that says its notes are public by default leaves nothing to hint at
	const visibilityHint = neverFound && noVisibility && options.defaultPublic === undefined ? NOTE_TEST.noVisibilityHint : null;
	return { kind: "tested", slug, outcomes, visibilityHint };
}
