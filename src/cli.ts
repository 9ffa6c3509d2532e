import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AuthModule } from './auth/auth.module.js';
import { isRole, type Role } from './auth/roles.js';
import { UsersService } from './auth/users.service.js';
import { DomainError } from './common/errors/domain-error.js';
import { loadConfig, loadDotEnv, type AppConfig } from './config/app-config.js';
import { ConfigError } from './config/config-error.js';
import { ConfigModule } from './config/config.module.js';
import { dataSourceOptions, runMigrations } from './database/data-source.js';
import { DatabaseModule } from './database/database.module.js';

const USAGE = `Usage: npm run cli -- <command>
  users:create --username NAME [--role user|agent|admin]...   password read from standard input
  migrations:run                                              apply pending migrations
  migrations:revert                                           undo the last migration
  migrations:show                                             list migrations and whether each is applied`;

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    process.stderr.write('Password (input is shown; pipe it in to avoid that): ');
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    if (process.stdin.isTTY && Buffer.concat(chunks).includes('\n')) {
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0];
}

async function createUser(config: AppConfig, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { username: { type: 'string' }, role: { type: 'string', multiple: true } },
  });
  if (!values.username) {
    throw new Error('--username is required');
  }
  const roles = values.role ?? ['user'];
  const badRole = roles.find((role) => !isRole(role));
  if (badRole) {
    throw new Error(`unknown role '${badRole}' (user, agent or admin)`);
  }
  const password = await readPassword();
  if (password.length < 8) {
    throw new Error('the password (first line of standard input) must have at least 8 characters');
  }
  const app = await NestFactory.createApplicationContext(
    { module: class CliModule {}, imports: [ConfigModule.forRoot(config), DatabaseModule, AuthModule] },
    { logger: ['error', 'warn'] },
  );
  try {
    const user = await app.get(UsersService).create(values.username, password, roles as Role[]);
    process.stdout.write(`created user ${user.username} (id ${user.id}, roles ${user.roles.join(',')})\n`);
  } finally {
    await app.close();
  }
}

async function migrations(config: AppConfig, command: string): Promise<void> {
  const dataSource = new DataSource(dataSourceOptions(config));
  await dataSource.initialize();
  try {
    if (command === 'migrations:run') {
      await runMigrations(dataSource);
      process.stdout.write('migrations are up to date\n');
    } else if (command === 'migrations:revert') {
      await dataSource.undoLastMigration({ transaction: 'each' });
      process.stdout.write('reverted the last migration\n');
    } else {
      const applied = new Set(
        (await dataSource.query<{ name: string }[]>('SELECT name FROM migrations')).map((row) => row.name),
      );
      for (const migration of dataSource.migrations) {
        process.stdout.write(`${applied.has(migration.name ?? '') ? '[x]' : '[ ]'} ${migration.name}\n`);
      }
    }
  } finally {
    await dataSource.destroy();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  loadDotEnv();
  const config = loadConfig();
  switch (command) {
    case 'users:create':
      return createUser(config, args);
    case 'migrations:run':
    case 'migrations:revert':
    case 'migrations:show':
      return migrations(config, command);
    default:
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message =
    error instanceof ConfigError || error instanceof DomainError || error instanceof Error
      ? error.message
      : String(error);
  process.stderr.write(`error: ${message}\n`);
  process.exitCode = 1;
});
