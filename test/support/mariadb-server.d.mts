export interface MariaDbServer {
  /** mysql://test:test@127.0.0.1:port — an account that may create databases; each app gets its own. */
  rootUrl: string;
  port: number;
  dir: string;
  pid: number;
}
export function freePort(): Promise<number>;
export function startMariaDb(): Promise<MariaDbServer>;
export function launchMariaDb(dir: string, port: number): Promise<number>;
export function killMariaDb(pid: number): Promise<void>;
export function stopMariaDb(pid: number, dir: string): Promise<void>;
