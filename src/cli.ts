import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AuthModule } from './auth/auth.module.js';
import { isRole, type Role } from './auth/roles.js';
import type { UserEntity } from './auth/entities/user.entity.js';
import { UsersService } from './auth/users.service.js';
import { DomainError } from './common/errors/domain-error.js';
import { loadConfig, loadDotEnv, type AppConfig } from './config/app-config.js';
import { ConfigError } from './config/config-error.js';
import { ConfigModule } from './config/config.module.js';
import { dataSourceOptions, revertLastMigration, runMigrations } from './database/data-source.js';
import { DatabaseModule } from './database/database.module.js';

const USAGE = `Usage: npm run cli -- <command>
  users:create --username NAME [--role user|agent|admin]...   password read from standard input
  users:list                                                  id, username, roles and state of every user
  users:passwd --username NAME                                new password read from standard input
  users:disable --username NAME                               the user's tokens stop working within 60 s
  migrations:run                                              apply pending migrations
  migrations:revert                                           undo the last migration
  migrations:show                                             list migrations and whether each is applied
  --help                                                      this text`;

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

async function newPassword(): Promise<string> {
  const password = await readPassword();
  if (password.length < 8) {
    throw new Error('the password (first line of standard input) must have at least 8 characters');
  }
  return password;
}

/** Runs `work` with the users service of a context holding only what it needs, closed afterwards. */
async function withUsers<T>(config: AppConfig, work: (users: UsersService) => Promise<T>): Promise<T> {
  const app = await NestFactory.createApplicationContext(
    { module: class CliModule {}, imports: [ConfigModule.forRoot(config), DatabaseModule, AuthModule] },
    { logger: ['error', 'warn'] },
  );
  try {
    return await work(app.get(UsersService));
  } finally {
    await app.close();
  }
}

function usernameOf(args: string[]): string {
  const { values } = parseArgs({ args, options: { username: { type: 'string' } } });
  if (!values.username) {
    throw new Error('--username is required');
  }
  return values.username;
}

async function existing(users: UsersService, username: string): Promise<UserEntity> {
  const user = await users.findByUsername(username);
  if (!user) {
    throw new Error(`no user '${username}'`);
  }
  return user;
}

async function createUser(config: AppConfig, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { username: { type: 'string' }, role: { type: 'string', multiple: true } },
  });
  if (!values.username) {
    throw new Error('--username is required');
  }
  const username = values.username;
  const roles = values.role ?? ['user'];
  const badRole = roles.find((role) => !isRole(role));
  if (badRole) {
    throw new Error(`unknown role '${badRole}' (user, agent or admin)`);
  }
  const password = await newPassword();
  const user = await withUsers(config, (users) => users.create(username, password, roles as Role[]));
  process.stdout.write(`created user ${user.username} (id ${user.id}, roles ${user.roles.join(',')})\n`);
}

async function listUsers(config: AppConfig): Promise<void> {
  const all = await withUsers(config, (users) => users.list());
  const rows = [
    ['id', 'username', 'roles', 'state'],
    ...all.map((u) => [String(u.id), u.username, u.roles.join(','), u.active ? 'active' : 'disabled']),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  for (const row of rows) {
    process.stdout.write(
      `${row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
}

async function changePassword(config: AppConfig, args: string[]): Promise<void> {
  const username = usernameOf(args);
  const password = await newPassword();
  await withUsers(config, async (users) => users.update((await existing(users, username)).id, { password }));
  process.stdout.write(`changed the password of ${username}\n`);
}

async function disableUser(config: AppConfig, args: string[]): Promise<void> {
  const username = usernameOf(args);
  await withUsers(config, async (users) =>
    users.update((await existing(users, username)).id, { active: false }),
  );
  process.stdout.write(`disabled ${username}; its tokens stop working within 60 s\n`);
}

async function migrations(config: AppConfig, command: string): Promise<void> {
  const dataSource = new DataSource(dataSourceOptions(config));
  await dataSource.initialize();
  try {
    if (command === 'migrations:run') {
      await runMigrations(dataSource);
      process.stdout.write('migrations are up to date\n');
    } else if (command === 'migrations:revert') {
      await revertLastMigration(dataSource);
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

const COMMANDS = new Set([
  'users:create',
  'users:list',
  'users:passwd',
  'users:disable',
  'migrations:run',
  'migrations:revert',
  'migrations:show',
]);

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === undefined || !COMMANDS.has(command)) {
    process.stderr.write(
      `${command === undefined ? 'no command given' : `unknown command '${command}'`}\n${USAGE}\n`,
    );
    process.exitCode = 2;
    return;
  }
  loadDotEnv();
  const config = loadConfig();
  switch (command) {
    case 'users:create':
      return createUser(config, args);
    case 'users:list':
      return listUsers(config);
    case 'users:passwd':
      return changePassword(config, args);
    case 'users:disable':
      return disableUser(config, args);
    default:
      return migrations(config, command);
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
