import { startMariaDb } from './mariadb-server.js';

export default async function setup(): Promise<void> {
  const server = await startMariaDb();
  process.env.TEST_MARIADB_URL = server.rootUrl;
  process.env.TEST_MARIADB_PID = String(server.pid);
  process.env.TEST_MARIADB_DIR = server.dir;
}
