import { stopMariaDb } from './mariadb-server.js';

export default async function teardown(): Promise<void> {
  const dir = process.env.TEST_MARIADB_DIR;
  if (dir) {
    await stopMariaDb(Number(process.env.TEST_MARIADB_PID), dir);
  }
}
