import { randomBytes } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { DomainError } from '../common/errors/domain-error.js';
import { UsersService } from './users.service.js';

/** The password `.env.example` ships with (a test keeps the two equal). */
export const EXAMPLE_ADMIN_PASSWORD = 'change-me-now';

/**
 * Makes sure the service can be administered. When no active admin exists, the bootstrap admin is
 * created from ADMIN_USERNAME and ADMIN_PASSWORD (a user made with the CLI before the first start
 * no longer prevents it); on an empty users table without them, `admin` gets a random password
 * printed this once. One log line says what happened, either way. Provided by the service's
 * AppModule only, not by AuthModule: the CLI builds AuthModule too.
 */
@Injectable()
export class AdminBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger(AdminBootstrap.name);

  constructor(
    private readonly users: UsersService,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { adminUsername, adminPassword } = this.config.auth;
    if (adminPassword === EXAMPLE_ADMIN_PASSWORD) {
      this.logger.warn(
        `ADMIN_PASSWORD is still the example's from .env.example: set your own in .env (or the environment)`,
      );
    }
    const admins = await this.users.countActiveAdmins();
    if (admins > 0) {
      this.logger.log(`bootstrap admin not needed: ${admins} active admin${admins === 1 ? '' : 's'}`);
      return;
    }
    if (adminUsername && adminPassword) {
      await this.fromSettings(adminUsername, adminPassword);
      return;
    }
    if ((await this.users.count()) > 0) {
      this.logger.warn(
        'no active admin, and ADMIN_USERNAME/ADMIN_PASSWORD are not set: set them and restart, or run ' +
          '`npm run cli -- users:create --role admin`',
      );
      return;
    }
    await this.withRandomPassword();
  }

  private async fromSettings(username: string, password: string): Promise<void> {
    const existing = await this.users.findByUsername(username);
    if (existing) {
      // Never taken over silently: that account may be someone's, with a password of their own.
      this.logger.warn(
        `no active admin, and ADMIN_USERNAME '${username}' is a user already (${existing.active ? 'active' : 'disabled'}, ` +
          `roles ${existing.roles.join(',')}): left unchanged; give it the admin role with the CLI, or choose another ADMIN_USERNAME`,
      );
      return;
    }
    if (await this.created(username, password)) {
      this.logger.log(
        `created the bootstrap admin '${username}' from ADMIN_USERNAME/ADMIN_PASSWORD (no active admin existed)`,
      );
    }
  }

  private async withRandomPassword(): Promise<void> {
    const username = 'admin';
    const password = randomBytes(12).toString('base64url');
    if (!(await this.created(username, password))) {
      return;
    }
    this.logger.log(`created the bootstrap admin '${username}'; its password is on stderr`);
    // Straight to stderr, never through the logger: logs are shipped and kept, and never
    // contain passwords. This line is for the operator's terminal only.
    process.stderr.write(
      `Bootstrap admin '${username}' created with password ${password} (shown once; change it)\n`,
    );
  }

  /** False when another copy of the service created it at the same moment. */
  private async created(username: string, password: string): Promise<boolean> {
    try {
      await this.users.create(username, password, ['admin']);
      return true;
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'conflict') {
        this.logger.log(`bootstrap admin '${username}' created by another copy of the service`);
        return false;
      }
      throw error;
    }
  }
}
