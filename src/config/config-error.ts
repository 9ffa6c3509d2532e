/** A bad setting. Its message is the one line printed before start-up stops. */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    detail: string,
  ) {
    super(`Invalid setting ${setting}: ${detail}`);
    this.name = 'ConfigError';
  }
}
