import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Debouncer } from "../src/debounce";

beforeEach(() => {
	vi.useFakeTimers();
});
afterEach(() => {
	vi.useRealTimers();
});

describe("Debouncer", () => {
	it("turns a burst of saves into one reload, delayMs after the last one", async () => {
		const reload = vi.fn(async () => {});
		const debouncer = new Debouncer(reload, 1000);
		for (let i = 0; i < 5; i++) {
			debouncer.trigger();
			await vi.advanceTimersByTimeAsync(400);
		}
		expect(reload).not.toHaveBeenCalled();
		await vi.advanceTimersByTimeAsync(600);
		expect(reload).toHaveBeenCalledTimes(1);
		await vi.advanceTimersByTimeAsync(10_000);
		expect(reload).toHaveBeenCalledTimes(1);
	});

	it("never runs two reloads at once: a save during a reload makes one more after it", async () => {
		let release: () => void = () => {};
		let running = 0;
		let maxRunning = 0;
		const reload = vi.fn(
			() =>
				new Promise<void>((resolve) => {
					running++;
					maxRunning = Math.max(maxRunning, running);
					release = () => {
						running--;
						resolve();
					};
				}),
		);
		const debouncer = new Debouncer(reload, 100);
		debouncer.trigger();
		await vi.advanceTimersByTimeAsync(100);
		expect(reload).toHaveBeenCalledTimes(1);
		debouncer.trigger();
		await vi.advanceTimersByTimeAsync(100);
		debouncer.trigger();
		await vi.advanceTimersByTimeAsync(100);
		expect(reload).toHaveBeenCalledTimes(1);
		release();
		await vi.advanceTimersByTimeAsync(0);
		expect(reload).toHaveBeenCalledTimes(2);
		release();
		await vi.advanceTimersByTimeAsync(0);
		expect(maxRunning).toBe(1);
		expect(reload).toHaveBeenCalledTimes(2);
	});

	it("keeps working after a failed reload", async () => {
		const reload = vi.fn().mockRejectedValueOnce(new Error("daemon down")).mockResolvedValue(undefined);
		const debouncer = new Debouncer(reload, 50);
		debouncer.trigger();
		await vi.advanceTimersByTimeAsync(50);
		debouncer.trigger();
		await vi.advanceTimersByTimeAsync(50);
		expect(reload).toHaveBeenCalledTimes(2);
	});

	it("cancel drops a scheduled reload; setDelay applies to the next trigger", async () => {
		const reload = vi.fn();
		const debouncer = new Debouncer(reload, 100);
		debouncer.trigger();
		debouncer.cancel();
		await vi.advanceTimersByTimeAsync(1000);
		expect(reload).not.toHaveBeenCalled();
		debouncer.setDelay(2000);
		debouncer.trigger();
		await vi.advanceTimersByTimeAsync(1999);
		expect(reload).not.toHaveBeenCalled();
		await vi.advanceTimersByTimeAsync(1);
		expect(reload).toHaveBeenCalledTimes(1);
	});
});
