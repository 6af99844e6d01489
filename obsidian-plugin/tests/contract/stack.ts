// Starts the real GrasBot daemon and the stand-in Ollama through tests/support/run_stack.py
// (the repository's Python launcher) and stops them. Shared by the contract and browser tests.
// Node timers: the browser test runs this in the node environment, where there is no window.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { clearTimeout, setTimeout } from "node:timers";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const PYTHON = path.join(REPO, ".venv", "bin", "python");
export const LAUNCHER = path.join(REPO, "tests", "support", "run_stack.py");
const START_TIMEOUT_MS = 90_000;

/** What the launcher prints once both servers listen. */
export interface StackInfo {
	daemon: string;
	ollama: string;
	token: string;
	/** A temporary copy of the bundled vault; edit it, then call `reload`. */
	vault: string;
	/** A question the bundled vault answers, and the stand-in's scripted reply to it. */
	question: string;
	reply: string;
	cors_origins: string[];
}

export interface Stack {
	info: StackInfo;
	/** Sends a launcher command (`script`, `release`) and waits for its answer. */
	command(cmd: "script" | "release", args?: Record<string, unknown>): Promise<void>;
	/** SIGTERM, then the exit code (0 when both servers stopped cleanly). */
	stop(): Promise<number | null>;
	/** The launcher's stderr so far (the daemon's log), for failure messages. */
	log(): string;
}

/** Fails, not skips, when the Python side is not installed. */
export function requirePython(): void {
	if (!existsSync(PYTHON)) {
		throw new Error(
			`${PYTHON} is missing: the contract tests run the real daemon. Run \`bash scripts/setup.sh --test\` from ${REPO} first.`,
		);
	}
}

export async function startStack(corsOrigins: string[] = []): Promise<Stack> {
	requirePython();
	const args = [LAUNCHER, ...corsOrigins.flatMap((origin) => ["--cors-origin", origin])];
	const child = spawn(PYTHON, args, { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] });
	let stderr = "";
	child.stderr?.setEncoding("utf8");
	child.stderr?.on("data", (chunk: string) => {
		stderr += chunk;
	});
	const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
	const waiting: ((line: string) => void)[] = [];
	const early: string[] = [];
	lines.on("line", (line) => {
		const next = waiting.shift();
		if (next) next(line);
		else early.push(line);
	});
	const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

	const nextLine = (what: string, timeoutMs: number): Promise<string> =>
		new Promise<string>((resolve, reject) => {
			const queued = early.shift();
			if (queued !== undefined) return resolve(queued);
			const timer = setTimeout(() => reject(new Error(`run_stack.py: no ${what} within ${timeoutMs} ms\n${stderr}`)), timeoutMs);
			waiting.push((line) => {
				clearTimeout(timer);
				resolve(line);
			});
			void exited.then((code) => {
				clearTimeout(timer);
				reject(new Error(`run_stack.py exited (code ${String(code)}) before its ${what}:\n${stderr}`));
			});
		});

	let info: StackInfo;
	try {
		info = JSON.parse(await nextLine("ready line", START_TIMEOUT_MS)) as StackInfo;
	} catch (error) {
		kill(child);
		throw error;
	}

	return {
		info,
		async command(cmd, commandArgs) {
			child.stdin?.write(`${JSON.stringify({ cmd, args: commandArgs })}\n`);
			const answer = JSON.parse(await nextLine(`answer to ${cmd}`, 10_000)) as { ok: boolean; error?: string };
			if (!answer.ok) throw new Error(`run_stack.py refused ${cmd}: ${answer.error ?? "?"}`);
		},
		async stop() {
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
			return exited;
		},
		log: () => stderr,
	};
}

function kill(child: ChildProcess): void {
	if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
}
