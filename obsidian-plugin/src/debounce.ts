/**
 * Reload-on-save: many saves in a burst make one reload, and a save during a reload makes one
 * more reload after it (never two at once).
 */

export interface Timers {
	setTimeout(callback: () => void, ms: number): number;
	clearTimeout(id: number): void;
}

const windowTimers: Timers = {
	setTimeout: (callback, ms) => window.setTimeout(callback, ms),
	clearTimeout: (id) => window.clearTimeout(id),
};

export class Debouncer {
	private timer: number | null = null;
	private running = false;
	private again = false;

	constructor(
		private readonly run: () => Promise<void> | void,
		private delayMs: number,
		private readonly timers: Timers = windowTimers,
	) {}

	setDelay(ms: number): void {
		this.delayMs = ms;
	}

	/** Schedules a run `delayMs` after the last trigger. */
	trigger(): void {
		if (this.timer !== null) this.timers.clearTimeout(this.timer);
		this.timer = this.timers.setTimeout(() => {
			this.timer = null;
			void this.fire();
		}, this.delayMs);
	}

	get pending(): boolean {
		return this.timer !== null || this.again;
	}

	cancel(): void {
		if (this.timer !== null) this.timers.clearTimeout(this.timer);
		this.timer = null;
		this.again = false;
	}

	private async fire(): Promise<void> {
		if (this.running) {
			this.again = true;
			return;
		}
		this.running = true;
		try {
			await this.run();
		} catch {
			// the run reports its own failures; a failed reload must not stop later ones
		} finally {
			this.running = false;
		}
		if (this.again) {
			this.again = false;
			await this.fire();
		}
	}
}
