import { Injectable, type OnModuleInit } from '@nestjs/common';
import { RegistryPort } from '../repositories/index.js';
import { RegistryEvents } from './registry-events.js';
import { WorkflowsService } from './workflows.service.js';

/**
 * Connects following (repositories/) to the registry: its registrations are the registry's
 * own, and its failures are RegistryEvents' (notifications listens there). Done at module
 * initialisation, before following's ticker starts (application bootstrap).
 */
@Injectable()
export class FollowingConnection implements OnModuleInit {
  constructor(
    private readonly port: RegistryPort,
    private readonly workflows: WorkflowsService,
    private readonly events: RegistryEvents,
  ) {}

  onModuleInit(): void {
    this.port.connect({
      register: (owner, registration) => this.workflows.register(owner, registration),
      followFailed: (tx, failure, at) => this.events.followFailed(tx, failure, at),
    });
  }
}
