import { type CompanionFiles, type CrateContents, type IssueSelection } from '../../crates/index.js';
import type { FollowGlobs } from '../follow/follow-rules.js';
import {
  CONFIG_FILE_NAMES,
  followOf,
  MAX_CONFIG_BYTES,
  parseConfigText,
  validateConfig,
  type LifemonitorConfig,
} from './lifemonitor-config.js';

/** What a registration from a repository reads beside the crate's metadata. */
export const CONFIG_COMPANIONS: CompanionFiles = { names: CONFIG_FILE_NAMES, maxBytes: MAX_CONFIG_BYTES };

/** A repository's `.lifemonitor.yaml` as one registration found it (API.md 12). */
export interface RepositoryConfig {
  /** Which file, when there is one (`.lifemonitor.yaml`, `lifemonitor.yaml`…). */
  file?: string;
  /** Its settings, when it is valid. */
  config?: LifemonitorConfig;
  /** Why it is not, when it is not: it is then left out as if absent. */
  problem?: string;
}

/** The configuration file of a repository's archive, read and checked. */
export function readRepositoryConfig(companion: CrateContents['companion']): RepositoryConfig {
  if (!companion) {
    return {};
  }
  const { name: file } = companion;
  if (companion.bytes === undefined) {
    return { file, problem: companion.problem ?? `${file} could not be read` };
  }
  let data: unknown;
  try {
    data = parseConfigText(new TextDecoder('utf-8', { fatal: true }).decode(companion.bytes));
  } catch (error) {
    return { file, problem: error instanceof Error ? error.message : String(error) };
  }
  const result = validateConfig(data);
  return result.valid ? { file, config: result.data } : { file, problem: result.message };
}

/** What the file says of a registration, where the body does not say it (API.md 12: the body's name, else the file's). */
export interface ConfigSettings {
  name?: string;
  /** Visibility, for a registration that creates the workflow. */
  public?: boolean;
  issues?: IssueSelection;
  /** The globs to follow; null: the file follows nothing it can say (absent or invalid). */
  follow: FollowGlobs | null;
}

export function configSettings({ config }: RepositoryConfig): ConfigSettings {
  if (!config) {
    return { follow: null };
  }
  return {
    name: config.name,
    public: config.public,
    issues: config.issues,
    follow: followOf(config),
  };
}
