import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's global one),
 * so that two apps in one process each count their own traffic. Modules inject this and
 * move the counters; `/metrics` renders them.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly registrations = new Counter({
    name: 'crate_registrations_total',
    help: 'Workflow registrations by result (created, failed)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly registrationFailures = new Counter({
    name: 'crate_registration_failures_total',
    help: 'Failed workflow registrations by cause',
    labelNames: ['cause'] as const,
    registers: [this.registry],
  });

  readonly refreshCycles = new Counter({
    name: 'refresh_cycles_total',
    help: 'Scheduler ticks that checked at least one instance',
    registers: [this.registry],
  });

  readonly instancesChecked = new Counter({
    name: 'refresh_instances_checked_total',
    help: 'Test instances checked by the scheduler',
    registers: [this.registry],
  });

  readonly upstreamRequests = new Counter({
    name: 'testing_service_checks_total',
    help: 'Checks of CI services by service type and result (200, 304, error, rate_limited); one request each in steady state',
    labelNames: ['service', 'result'] as const,
    registers: [this.registry],
  });

  readonly upstreamHttpRequests = new Counter({
    name: 'testing_service_http_requests_total',
    help: 'HTTP requests sent to CI services by service type (a check may send more than one, e.g. for re-run attempts)',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });

  readonly pausedServices = new Gauge({
    name: 'testing_services_paused',
    help: 'CI services paused by an exhausted rate limit, as seen by this copy at its last tick',
    registers: [this.registry],
  });

  readonly notificationsRaised = new Counter({
    name: 'notifications_raised_total',
    help: 'Notifications raised (one per subscriber of an event)',
    registers: [this.registry],
  });

  readonly deliveries = new Counter({
    name: 'notification_deliveries_total',
    help: 'Delivery attempts by channel type and result (sent, retry, failed)',
    labelNames: ['channel', 'result'] as const,
    registers: [this.registry],
  });

  readonly outboxDepth = new Gauge({
    name: 'notification_outbox_depth',
    help: 'Deliveries waiting to be sent, as seen by this copy at its last look',
    registers: [this.registry],
  });

  readonly outboxOldestAge = new Gauge({
    name: 'notification_outbox_oldest_pending_seconds',
    help: 'Age of the oldest delivery waiting to be sent (0 when none), as seen by this copy at its last look',
    registers: [this.registry],
  });

  readonly cloudCalls = new Counter({
    name: 'cloud_calls_total',
    help: 'Calls to cloud providers by provider type, operation and result (ok, error)',
    labelNames: ['provider', 'operation', 'result'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Express middleware counting every request, routed or not, by its route pattern. Each label
   * set is made once and reused (per middleware, so two apps in one process keep their own), and
   * the time is read with performance.now(): prom-client's timer copies its labels into a new
   * object on every request.
   */
  httpMiddleware(): (request: Request, response: Response, next: NextFunction) => void {
    const labelSets = new Map<string, HttpLabels>();
    const labelsOf = (request: Request, status: number): HttpLabels => {
      const route = routePattern(request);
      const key = `${request.method} ${status} ${route}`;
      let labels = labelSets.get(key);
      if (labels === undefined) {
        labels = { method: request.method, route, status: String(status) };
        labelSets.set(key, labels);
      }
      return labels;
    };
    return (request, response, next) => {
      const started = performance.now();
      response.once('finish', () => {
        const labels = labelsOf(request, response.statusCode);
        this.httpRequests.inc(labels);
        this.httpDuration.observe(labels, (performance.now() - started) / 1000);
      });
      next();
    };
  }
}

interface HttpLabels {
  method: string;
  route: string;
  status: string;
}

/** The matched route's pattern (`/workflows/:wf_uuid`), never the raw path, so label values stay few. */
function routePattern(request: Request): string {
  const route: unknown = (request as { route?: unknown }).route;
  if (typeof route === 'object' && route !== null && 'path' in route && typeof route.path === 'string') {
    return request.baseUrl === '' ? route.path : `${request.baseUrl}${route.path}`;
  }
  return 'unmatched';
}
