import { startMariaDb } from './mariadb-server.mjs';

export default async function setup() {
  const server = await startMariaDb();
  process.env.TEST_MARIADB_URL = server.rootUrl;
  process.env.TEST_MARIADB_PID = String(server.pid);
  process.env.TEST_MARIADB_DIR = server.dir;
}
