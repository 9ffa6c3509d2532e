/**
 * A bad setting. Its message is what is printed before start-up stops: one line per mistake
 * (a settings file can hold several).
 */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    detail: string | readonly string[],
  ) {
    super(
      (typeof detail === 'string' ? [detail] : detail)
        .map((line) => `Invalid setting ${setting}: ${line}`)
        .join('\n'),
    );
    this.name = 'ConfigError';
  }
}
