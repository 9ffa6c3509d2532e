import { stopMariaDb } from './mariadb-server.mjs';

export default async function teardown() {
  if (process.env.TEST_MARIADB_DIR) {
    await stopMariaDb(Number(process.env.TEST_MARIADB_PID), process.env.TEST_MARIADB_DIR);
  }
}
