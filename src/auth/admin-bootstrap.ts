import { randomBytes } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { DomainError } from '../common/errors/domain-error.js';
import { UsersService } from './users.service.js';

/**
 * Creates the bootstrap admin when the users table is empty: from ADMIN_USERNAME and
 * ADMIN_PASSWORD, or else `admin` with a random password printed this once. Provided by the
 * service's AppModule only, not by AuthModule: the CLI builds AuthModule too, and there a
 * random password would be made that nobody sees.
 */
@Injectable()
export class AdminBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger(AdminBootstrap.name);

  constructor(
    private readonly users: UsersService,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if ((await this.users.count()) > 0) {
      return;
    }
    const { adminUsername, adminPassword } = this.config.auth;
    const username = adminUsername ?? 'admin';
    const password = adminPassword ?? randomBytes(12).toString('base64url');
    try {
      await this.users.create(username, password, ['admin']);
    } catch (error) {
      // Another copy of the service created it at the same moment.
      if (error instanceof DomainError && error.kind === 'conflict') {
        return;
      }
      throw error;
    }
    if (adminUsername && adminPassword) {
      this.logger.log(`created the bootstrap admin '${username}' from ADMIN_USERNAME/ADMIN_PASSWORD`);
      return;
    }
    this.logger.log(`created the bootstrap admin '${username}'; its password is on stderr`);
    // Straight to stderr, never through the logger: logs are shipped and kept, and never
    // contain passwords. This line is for the operator's terminal only.
    process.stderr.write(
      `Bootstrap admin '${username}' created with password ${password} (shown once; change it)\n`,
    );
  }
}
