import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NotToml, parseToml, TomlTime, TomlTooDeep } from "../src/toml";

interface TomlCase {
	text: string;
	from: string;
	accepted: boolean;
	value?: unknown;
	deep?: boolean;
}

const TOML_CASES = (
	JSON.parse(readFileSync(path.join(__dirname, "..", "..", "shared-protocol", "cases", "toml.json"), "utf8")) as {
		cases: TomlCase[];
	}
).cases;

/** toml.ts's text of a date or a date-time (which it cuts to microseconds, as tomllib), or a time of day (`TomlTime`,
 * as written: `cut` to microseconds here), as Python's isoformat writes tomllib's value (the file's tags). */
function isoformat(written: string, cut = false): string | undefined {
	const m = /^(\d{4}-\d{2}-\d{2})?(?:[Tt ]?(\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})?)?$/.exec(written);
	if (m === null) return undefined;
	const [, date, time, fraction, offset] = m;
	if (fraction !== undefined && fraction.length > 6 && !cut) return undefined;
	const micro = fraction === undefined ? "" : fraction.slice(0, 6).padEnd(6, "0");
	const clock = time === undefined ? "" : time + (/^0*$/.test(micro) ? "" : `.${micro}`);
	const zone = offset === undefined ? "" : /^([Zz]|-00:00)$/.test(offset) ? "+00:00" : offset;
	return date !== undefined && time !== undefined ? `${date}T${clock}${zone}` : (date ?? clock);
}

const describeValue = (value: unknown): string => (value instanceof TomlTime ? `TomlTime(${value.toml})` : typeof value === "number" ? String(value) : JSON.stringify(value));

/** Where toml.ts's value differs from tomllib's (the file's, tagged), or null where they are the same. */
function difference(expected: unknown, actual: unknown, at = "value"): string | null {
	const differs = (): string => `${at}: tomllib ${JSON.stringify(expected)}, toml.ts ${describeValue(actual)}`;
	if (Array.isArray(expected)) {
		if (!Array.isArray(actual) || actual.length !== expected.length) return differs();
		for (const [n, item] of expected.entries()) {
			const found = difference(item, actual[n], `${at}[${n}]`);
			if (found !== null) return found;
		}
		return null;
	}
	if (expected !== null && typeof expected === "object") {
		const tags = Object.keys(expected);
		const tag = tags.length === 1 && tags[0].startsWith("$") ? tags[0] : undefined;
		const tagged = tag === undefined ? "" : String((expected as Record<string, unknown>)[tag]);
		if (tag === "$date" || tag === "$datetime") return typeof actual === "string" && isoformat(actual) === tagged ? null : differs();
		if (tag === "$time") return actual instanceof TomlTime && isoformat(actual.toml, true) === tagged ? null : differs();
		if (tag === "$float") return typeof actual === "number" && (tagged === "nan" ? Number.isNaN(actual) : actual === Number(tagged.replace("inf", "Infinity"))) ? null : differs();
		if (tag === "$int") return actual === Number(BigInt(tagged)) ? null : differs();
		if (actual === null || typeof actual !== "object" || Array.isArray(actual) || actual instanceof TomlTime) return differs();
		const table = actual as Record<string, unknown>;
		const keys = Object.keys(expected).sort();
		if (JSON.stringify(Object.keys(table).sort()) !== JSON.stringify(keys)) return `${at}: keys ${JSON.stringify(keys)} in tomllib's, ${JSON.stringify(Object.keys(table).sort())} in toml.ts's`;
		for (const key of keys) {
			const found = difference((expected as Record<string, unknown>)[key], table[key], `${at}[${JSON.stringify(key)}]`);
			if (found !== null) return found;
		}
		return null;
	}
	return expected === actual ? null : differs(); // a number: 0 and -0 alike, as the verdicts take them
}

/** What toml.ts makes of a case, against tomllib's reading: null where they agree. */
function disagreement(toml: TomlCase): string | null {
	let value: unknown;
	try {
		value = parseToml(toml.text);
	} catch (error) {
		if (error instanceof NotToml) return toml.accepted ? "tomllib accepts it, toml.ts refuses it (NotToml)" : null;
		// past 32 levels toml.ts stops (the daemon leaves the note out), before it sees whether what follows parses (private either way)
		if (error instanceof TomlTooDeep) return toml.deep || !toml.accepted ? null : "toml.ts stops past 32 levels (TomlTooDeep), where the daemon reads it";
		return `toml.ts throws ${String(error)}`;
	}
	if (!toml.accepted) return `tomllib refuses it, toml.ts reads ${describeValue(value)}`;
	return difference(toml.value, value);
}

describe("toml.ts against Python's tomllib (shared-protocol/cases/toml.json)", () => {
	it("has the cases scripts/toml_cases.py generates", () => {
		expect(TOML_CASES.length).toBeGreaterThan(1500);
		expect(new Set(TOML_CASES.map((toml) => toml.from))).toEqual(new Set(["snippet", "valid", "date", "toml1.1", "number", "nesting", "fuzz"]));
	});

	it("refuses what tomllib refuses and reads the rest to tomllib's values, for every shared case", () => {
		const broken = TOML_CASES.flatMap((toml) => {
			const why = disagreement(toml);
			return why === null ? [] : [`${JSON.stringify(toml.text)} (${toml.from}): ${why}`];
		});
		// the first differing case by its text, then how many differ
		const report = `${broken.length} of ${TOML_CASES.length} cases differ, the first: ${broken.slice(0, 8).join("\n")}`;
		expect(broken.length, report).toBe(0);
	});
});
