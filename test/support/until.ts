/**
 * Waits until `done` holds, asking again every `everyMs`. Fails after `timeoutMs` naming `what`,
 * so a wait that never ends says what it waited for instead of running into jest's timeout (30 s
 * unless a test sets its own: a longer test passes a longer `timeoutMs`).
 */
export async function until(
  what: string,
  done: () => Promise<boolean> | boolean,
  { timeoutMs = 20_000, everyMs = 100 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) {
      throw new Error(`not within ${timeoutMs / 1000} s: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
