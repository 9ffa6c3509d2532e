import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { ConfigError } from '../../config/config-error.js';
import { DEFAULT_EXECUTOR, type ExecutorSettings } from '../../config/executors-file.js';
import { EXECUTOR_FACTORIES, type Executor, type ExecutorFactory } from './executor.js';

/**
 * The executors of EXECUTORS_FILE (STYLE.md 6, as clouds are): their types and settings are
 * checked by the registered factories at start-up, in the API (which only names them) and in
 * runners alike, every mistake a line of the one ConfigError that stops start-up; an executor
 * object is made the first time a runner asks for it (a `local` one needs RUNNER_USER, which the
 * API's copies do not).
 */
@Injectable()
export class ExecutorRegistry {
  private readonly settings = new Map<string, ExecutorSettings>();
  private readonly factories = new Map<string, ExecutorFactory>();
  private readonly made = new Map<string, Executor>();

  constructor(
    @Inject(EXECUTOR_FACTORIES) factories: ExecutorFactory[],
    private readonly config: AppConfig,
  ) {
    for (const factory of factories) {
      this.factories.set(factory.type, factory);
    }
    const problems: string[] = [];
    for (const executor of config.managedRuns.executors) {
      const factory = this.factories.get(executor.type);
      if (!factory) {
        problems.push(
          `executor '${executor.name}' has unknown type '${executor.type}' (types: ${[...this.factories.keys()].join(', ')})`,
        );
        continue;
      }
      problems.push(...factory.problemsOf(executor));
      this.settings.set(executor.name, executor);
    }
    if (problems.length > 0) {
      throw new ConfigError('EXECUTORS_FILE', problems);
    }
  }

  /** The executor a managed instance's resource names: `local` for an empty one. */
  static nameOf(resource: string): string {
    return resource.trim() === '' ? DEFAULT_EXECUTOR : resource.trim();
  }

  names(): string[] {
    return [...this.settings.keys()];
  }

  has(name: string): boolean {
    return this.settings.has(name);
  }

  typeOf(name: string): string | undefined {
    return this.settings.get(name)?.type;
  }

  /** The executor named `name`; throws when EXECUTORS_FILE has none of that name. */
  get(name: string): Executor {
    const made = this.made.get(name);
    if (made) {
      return made;
    }
    const settings = this.settings.get(name);
    if (!settings) {
      throw new Error(`No executor '${name}' in EXECUTORS_FILE`);
    }
    const executor = this.factories.get(settings.type)!.create(settings, this.config);
    this.made.set(name, executor);
    return executor;
  }
}
