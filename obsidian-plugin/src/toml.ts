/**
 * TOML 1.0 as the daemon reads Hugo's TOML front matter, with Python's tomllib: what it refuses
 * (a key or a table given twice, an escape TOML has not, `1__0`, `2021-02-29`, a trailing comma in
 * an inline table, a line that is no statement…) throws here too, for a front matter that does not
 * parse keeps the note private, and one read more leniently said public what the daemon hid.
 * A port of tomllib's own rules (CPython Lib/tomllib/_parser.py), kept to what a verdict needs.
 */

/** What tomllib refuses (its words are English: this one is never shown). */
export class NotToml extends SyntaxError {
	constructor() {
		super("TOML invalide");
	}
}

type Table = Record<string, unknown>;
type Key = string[];

/** Arrays and inline tables nested past the daemon's bound (visibility.py `_nested_past`, 32 levels):
 * tomllib raises RecursionError or the daemon refuses them, and here the runtime's stack would run out. */
export class TomlTooDeep extends SyntaxError {
	constructor() {
		super("TOML trop imbriqué");
	}
}

/** A time of day alone (`07:32:00`), which no key that says who reads a note reads as a yes. */
export class TomlTime {
	constructor(readonly toml: string) {}
}

/** Whether tomllib reads `value` as a dict or a list, which nothing may add to once written. */
const isContainer = (value: unknown): boolean => value !== null && typeof value === "object" && !(value instanceof TomlTime);

// eslint-disable-next-line no-control-regex -- the control characters TOML forbids
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
const BARE = /[A-Za-z0-9_-]/;
const ESCAPES: Record<string, string> = { b: "\b", t: "\t", n: "\n", f: "\f", r: "\r", '"': '"', "\\": "\\" };
const TIME = String.raw`([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d{1,6})\d*)?`;
const DATETIME = new RegExp(String.raw`(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?:[Tt ]${TIME}(?:([Zz])|[+-](?:[01]\d|2[0-3]):[0-5]\d)?)?`, "y");
const LOCAL_TIME = new RegExp(TIME, "y");
const NUMBER =
	/0(?:x[0-9A-Fa-f](?:_?[0-9A-Fa-f])*|b[01](?:_?[01])*|o[0-7](?:_?[0-7])*)|[+-]?(?:0|[1-9](?:_?\d)*)((?:\.\d(?:_?\d)*)?(?:[eE][+-]?\d(?:_?\d)*)?)/y;

// the values written as words: a sign may only precede `inf` and `nan`, which no number regex reads
const WORD = /true|false|[+-]?(?:inf|nan)/y;
const WORDS: Record<string, unknown> = { true: true, false: false, inf: Infinity, "-inf": -Infinity, nan: Number.NaN, "-nan": Number.NaN };

const EXPLICIT = 1; // a table a header opened, which no header nor dotted key opens again
const FROZEN = 2; // an inline table or an array, which nothing adds to

interface Flagged {
	flags: Set<number>;
	recursive: Set<number>;
	nested: Map<string, Flagged>;
}

/** tomllib's `Flags`: what each table may still receive. */
class Flags {
	private root = new Map<string, Flagged>();
	private pending: [Key, number][] = [];

	set(key: Key, flag: number, recursive: boolean): void {
		let at = this.root;
		let node: Flagged | undefined;
		for (const part of key) {
			node = at.get(part) ?? { flags: new Set(), recursive: new Set(), nested: new Map() };
			at.set(part, node);
			at = node.nested;
		}
		(recursive ? node?.recursive : node?.flags)?.add(flag);
	}

	unsetAll(key: Key): void {
		let at: Map<string, Flagged> | undefined = this.root;
		for (const part of key.slice(0, -1)) at = at?.get(part)?.nested;
		at?.delete(key[key.length - 1]);
	}

	is(key: Key, flag: number): boolean {
		let at = this.root;
		for (const [n, part] of key.entries()) {
			const node = at.get(part);
			if (node === undefined) return false;
			if (node.recursive.has(flag) || (n === key.length - 1 && node.flags.has(flag))) return true;
			at = node.nested;
		}
		return false;
	}

	addPending(key: Key, flag: number): void {
		this.pending.push([key, flag]);
	}

	finalizePending(): void {
		for (const [key, flag] of this.pending) this.set(key, flag, false);
		this.pending = [];
	}
}

const own = (table: Table, key: string): boolean => Object.prototype.hasOwnProperty.call(table, key);
const isTable = (value: unknown): value is Table => isContainer(value) && !Array.isArray(value);

/** The table `key` names under `root`, made where missing; an array of tables' last one (`lists`). */
function nest(root: Table, key: Key, lists = true): Table {
	let at: unknown = root;
	for (const part of key) {
		const table = at as Table;
		if (!own(table, part)) table[part] = Object.create(null) as Table;
		at = table[part];
		if (lists && Array.isArray(at)) at = at[at.length - 1];
		if (!isTable(at)) throw new NotToml();
	}
	return at as Table;
}

/** A reader of one TOML document, as tomllib's `loads`. */
class Reader {
	pos = 0;
	private depth = 0; // arrays and inline tables open around `pos`
	constructor(private readonly src: string) {}

	private at(offset = 0): string {
		return this.src.charAt(this.pos + offset);
	}

	private starts(text: string): boolean {
		return this.src.startsWith(text, this.pos);
	}

	private skip(chars: string): void {
		while (this.pos < this.src.length && chars.includes(this.at())) this.pos++;
	}

	skipComment(): void {
		if (this.at() !== "#") return;
		const end = this.src.indexOf("\n", this.pos);
		const comment = this.src.slice(this.pos, end < 0 ? undefined : end);
		if (CONTROL.test(comment)) throw new NotToml();
		this.pos += comment.length;
	}

	private skipArrayBlanks(): void {
		for (let before = -1; before !== this.pos; ) {
			before = this.pos;
			this.skip(" \t\n");
			this.skipComment();
		}
	}

	document(): Table {
		const root = Object.create(null) as Table;
		const flags = new Flags();
		let header: Key = [];
		for (;;) {
			this.skip(" \t");
			const char = this.at();
			if (char === "\n") {
				this.pos++;
				continue;
			}
			if (BARE.test(char) || char === '"' || char === "'") {
				this.keyValue(root, flags, header);
			} else if (char === "[") {
				flags.finalizePending();
				header = this.at(1) === "[" ? this.arrayHeader(root, flags) : this.tableHeader(root, flags);
			} else if (char !== "#" && char !== "") {
				throw new NotToml();
			}
			this.skip(" \t");
			this.skipComment();
			if (this.pos >= this.src.length) return root;
			if (this.at() !== "\n") throw new NotToml();
			this.pos++;
		}
	}

	private tableHeader(root: Table, flags: Flags): Key {
		this.pos++;
		this.skip(" \t");
		const key = this.key();
		if (flags.is(key, EXPLICIT) || flags.is(key, FROZEN)) throw new NotToml();
		flags.set(key, EXPLICIT, false);
		nest(root, key);
		if (!this.starts("]")) throw new NotToml();
		this.pos++;
		return key;
	}

	private arrayHeader(root: Table, flags: Flags): Key {
		this.pos += 2;
		this.skip(" \t");
		const key = this.key();
		if (flags.is(key, FROZEN)) throw new NotToml();
		flags.unsetAll(key);
		flags.set(key, EXPLICIT, false);
		const parent = nest(root, key.slice(0, -1));
		const last = key[key.length - 1];
		if (!own(parent, last)) parent[last] = [];
		const list = parent[last];
		if (!Array.isArray(list)) throw new NotToml();
		list.push(Object.create(null) as Table);
		if (!this.starts("]]")) throw new NotToml();
		this.pos += 2;
		return key;
	}

	private keyValue(root: Table, flags: Flags, header: Key): void {
		const [key, value] = this.pair();
		for (let n = 1; n < key.length; n++) {
			const path = [...header, ...key.slice(0, n)];
			if (flags.is(path, EXPLICIT)) throw new NotToml();
			flags.addPending(path, EXPLICIT);
		}
		const parent = [...header, ...key.slice(0, -1)];
		if (flags.is(parent, FROZEN)) throw new NotToml();
		const table = nest(root, parent);
		const stem = key[key.length - 1];
		if (own(table, stem)) throw new NotToml();
		if (isContainer(value)) flags.set([...header, ...key], FROZEN, true);
		table[stem] = value;
	}

	private pair(): [Key, unknown] {
		const key = this.key();
		if (this.at() !== "=") throw new NotToml();
		this.pos++;
		this.skip(" \t");
		return [key, this.value()];
	}

	private key(): Key {
		const key = [this.keyPart()];
		for (this.skip(" \t"); this.at() === "."; this.skip(" \t")) {
			this.pos++;
			this.skip(" \t");
			key.push(this.keyPart());
			if (key.length > 32) throw new TomlTooDeep(); // its tables past the bound, and `keyValue`'s checks quadratic in its parts
		}
		return key;
	}

	private keyPart(): string {
		const char = this.at();
		if (char === "'") return this.literal();
		if (char === '"') return this.basic(false);
		const start = this.pos;
		while (BARE.test(this.at())) this.pos++;
		if (this.pos === start) throw new NotToml();
		return this.src.slice(start, this.pos);
	}

	/** A basic string from its opening quote(s): escapes read, a control character refused. */
	private basic(multiline: boolean): string {
		this.pos += multiline ? 3 : 1;
		if (multiline && this.at() === "\n") this.pos++;
		let text = "";
		for (;;) {
			const char = this.at();
			if (char === "") throw new NotToml();
			if (char === '"' && (!multiline || this.starts('"""'))) {
				this.pos += multiline ? 3 : 1;
				return multiline ? text + this.extraQuotes('"') : text;
			}
			if (char === "\\") {
				text += this.escape(multiline);
				continue;
			}
			if (CONTROL.test(char) && !(multiline && char === "\n")) throw new NotToml();
			text += char;
			this.pos++;
		}
	}

	private escape(multiline: boolean): string {
		const id = this.src.slice(this.pos, this.pos + 2);
		this.pos += 2;
		if (multiline && (id === "\\ " || id === "\\\t" || id === "\\\n")) {
			// a line-ending backslash: the blanks that follow, line ends too, are no text
			if (id !== "\\\n") {
				this.skip(" \t");
				if (this.pos >= this.src.length) return "";
				if (this.at() !== "\n") throw new NotToml();
			}
			this.skip(" \t\n");
			return "";
		}
		if (id === "\\u" || id === "\\U") {
			const hex = this.src.slice(this.pos, this.pos + (id === "\\u" ? 4 : 8));
			this.pos += hex.length;
			const point = /^[0-9A-Fa-f]+$/.test(hex) && hex.length === (id === "\\u" ? 4 : 8) ? parseInt(hex, 16) : -1;
			if (point < 0 || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) throw new NotToml();
			return String.fromCodePoint(point);
		}
		const named = ESCAPES[id.charAt(1)];
		if (id.charAt(0) !== "\\" || named === undefined) throw new NotToml();
		return named;
	}

	/** A multi-line string's closing delimiter may be followed by one or two more of its quotes, its text's. */
	private extraQuotes(quote: string): string {
		let extra = "";
		while (extra.length < 2 && this.at() === quote) {
			extra += quote;
			this.pos++;
		}
		return extra;
	}

	private literal(): string {
		this.pos++;
		const end = this.src.indexOf("'", this.pos);
		if (end < 0) throw new NotToml();
		const text = this.src.slice(this.pos, end);
		if (CONTROL.test(text)) throw new NotToml();
		this.pos = end + 1;
		return text;
	}

	private multilineLiteral(): string {
		this.pos += 3;
		if (this.at() === "\n") this.pos++;
		const end = this.src.indexOf("'''", this.pos);
		if (end < 0) throw new NotToml();
		const text = this.src.slice(this.pos, end);
		if (CONTROL.test(text.replace(/\n/g, ""))) throw new NotToml();
		this.pos = end + 3;
		return text + this.extraQuotes("'");
	}

	/** A value as tomllib gives it, a date as ISO text (which `dateInstant` reads), a time alone a `TomlTime`. */
	value(): unknown {
		if (this.starts('"""')) return this.basic(true);
		if (this.starts('"')) return this.basic(false);
		if (this.starts("'''")) return this.multilineLiteral();
		if (this.starts("'")) return this.literal();
		const word = this.sticky(WORD);
		if (word) return WORDS[word[0].replace(/^\+/, "")];
		if (this.starts("[") || this.starts("{")) {
			if (++this.depth > 32) throw new TomlTooDeep();
			const value = this.starts("[") ? this.array() : this.inlineTable();
			this.depth--;
			return value;
		}
		const date = this.sticky(DATETIME);
		if (date) {
			const [year, month, day] = [1, 2, 3].map((n) => Number(date[n]));
			const check = new Date(0);
			check.setUTCFullYear(year, month - 1, day);
			if (year < 1 || check.getUTCDate() !== day) throw new NotToml(); // Python's datetime: year 1 on, `2021-02-29` none
			return date[0].toUpperCase().replace(/(\.\d{6})\d+/, "$1");
		}
		const time = this.sticky(LOCAL_TIME);
		if (time) return new TomlTime(time[0]);
		const number = this.sticky(NUMBER);
		if (number) {
			const written = number[0].replace(/_/g, "");
			return number[1] ? Number(written) : written.startsWith("0") && written.length > 1 ? parseInt(written.slice(2), { x: 16, b: 2, o: 8 }[written[1]]) : Number(written);
		}
		throw new NotToml();
	}

	private sticky(pattern: RegExp): RegExpExecArray | null {
		pattern.lastIndex = this.pos;
		const m = pattern.exec(this.src);
		if (m) this.pos += m[0].length;
		return m;
	}

	private array(): unknown[] {
		this.pos++;
		const array: unknown[] = [];
		for (;;) {
			this.skipArrayBlanks();
			if (this.starts("]")) break;
			array.push(this.value());
			this.skipArrayBlanks();
			if (this.starts("]")) break;
			if (!this.starts(",")) throw new NotToml();
			this.pos++;
		}
		this.pos++;
		return array;
	}

	private inlineTable(): Table {
		this.pos++;
		const table = Object.create(null) as Table;
		const flags = new Flags();
		this.skip(" \t");
		if (this.starts("}")) {
			this.pos++;
			return table;
		}
		for (;;) {
			const [key, value] = this.pair();
			if (flags.is(key, FROZEN)) throw new NotToml();
			const parent = nest(table, key.slice(0, -1), false);
			const stem = key[key.length - 1];
			if (own(parent, stem)) throw new NotToml();
			parent[stem] = value;
			this.skip(" \t");
			if (this.starts("}")) {
				this.pos++;
				return table;
			}
			if (!this.starts(",")) throw new NotToml();
			if (isContainer(value)) flags.set(key, FROZEN, true);
			this.pos++;
			this.skip(" \t");
		}
	}
}

/** A TOML document's tables and values, as tomllib reads it; throws `NotToml` where it refuses it, `TomlTooDeep` past 32 levels of values. */
export function parseToml(text: string): Table {
	return new Reader(text.replace(/\r\n/g, "\n")).document();
}

/** A TOML basic string's text, between its quotes, as tomllib reads it (`\u0061`, a tab); undefined for what it refuses. */
export function tomlBasicString(content: string): string | undefined {
	try {
		const reader = new Reader(`"${content}"`);
		const text = reader.value();
		return reader.pos === content.length + 2 ? (text as string) : undefined;
	} catch {
		return undefined;
	}
}
