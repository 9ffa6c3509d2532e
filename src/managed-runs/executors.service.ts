import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import type { EngineAvailability } from './executors/executor.js';
import { ExecutorRegistry } from './executors/executor.registry.js';
import { ManagedRunsRepository } from './managed-runs.repository.js';
import { REPORT_MS } from './runner/run-queue.runner.js';

/** A runner that has not reported for this long (three reports) is taken for gone. */
const SEEN_WITHIN_MS = 3 * REPORT_MS;

/** One executor of EXECUTORS_FILE as GET /executors shows it. */
export interface ExecutorView {
  name: string;
  type: string;
  engines: EngineAvailability[];
  runners: number;
  lastSeen: Date | null;
}

/** What each executor can run (API.md 17, GET /executors), as its runners last reported. */
@Injectable()
export class ExecutorsService {
  constructor(
    private readonly executors: ExecutorRegistry,
    private readonly runs: ManagedRunsRepository,
    private readonly clock: Clock,
  ) {}

  async list(): Promise<ExecutorView[]> {
    const reports = await this.runs.runnersSeenSince(new Date(this.clock.nowMs() - SEEN_WITHIN_MS));
    return this.executors.names().map((name) => {
      const mine = reports.filter((report) => report.executor === name);
      const engines = new Map<string, EngineAvailability>();
      for (const report of mine) {
        for (const engine of report.engines) {
          engines.set(engine.engine, engine);
        }
      }
      const lastSeen = mine.reduce<Date | null>(
        (latest, report) => (latest === null || report.seenAt > latest ? report.seenAt : latest),
        null,
      );
      return {
        name,
        type: this.executors.typeOf(name) ?? name,
        engines: [...engines.values()].sort((a, b) => a.engine.localeCompare(b.engine)),
        runners: mine.length,
        lastSeen,
      };
    });
  }
}
