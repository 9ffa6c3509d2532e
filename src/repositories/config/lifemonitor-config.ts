import { Ajv, type ErrorObject } from 'ajv';
import { parseDocument } from 'yaml';
import { DomainError } from '../../common/errors/domain-error.js';
import { isRecord } from '../../common/is-record.js';

/**
 * LifeMonitor's JSON schema of `.lifemonitor.yaml` (draft-07), as `GET
 * /integrations/github/config/schema.json` serves it. From crs4/life_monitor @
 * faba564eeb2056abb21ef70e67c49137a5527d4b, `lifemonitor/schemas/lifemonitor.json` (MIT), member
 * for member; the descriptions are LifeMonitor's, typos included, so that clients see one document.
 */
export const LIFEMONITOR_CONFIG_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://api.lifemonitor.eu/config/schemas.json',
  title: 'LifeMonitor Configuration File',
  type: 'object',
  properties: {
    name: {
      description: 'worfklow name (override name defined on the RO-Crate metadata)',
      type: 'string',
      minLength: 1,
    },
    public: {
      description: 'worfklow visibility',
      type: 'boolean',
      default: false,
    },
    issues: {
      type: 'object',
      properties: {
        check: {
          description:
            'Enable/Disable issue checker. The list of issue types can be found @ <LIFEMONITOR_API_URL>/workflows/issues (e.g., https://api.lifemonitor.eu/workflows/issues)',
          type: 'boolean',
        },
        include: {
          description: 'csv of issues to check (all included by default)',
          type: 'array',
          items: { type: 'string' },
        },
        exclude: {
          description: 'csv of issues to ignore (none ignored by default)',
          type: 'array',
          items: { type: 'string' },
        },
      },
      additionalProperties: false,
    },
    push: {
      type: 'object',
      minimum: 1,
      properties: {
        branches: {
          type: 'array',
          items: {
            $ref: '#/definitions/push_ref',
            description: 'Repository branches to monitor for updates.',
          },
        },
        tags: {
          type: 'array',
          items: { $ref: '#/definitions/push_ref' },
          description: 'Repository tags to monitor for updates.',
        },
      },
      additionalProperties: false,
    },
  },
  required: [],
  definitions: {
    push_ref: {
      description: '',
      type: 'object',
      properties: {
        name: {
          description: 'Name expression for the branch or tag',
          type: 'string',
          minLength: 1,
        },
        update_registries: {
          description:
            "Which workflow registries to notify about the code change. Notifications only be sent if 'enable_notifications' is true.",
          type: 'array',
          items: { type: 'string' },
          default: [],
        },
        enable_notifications: {
          description:
            "Whether to send notifications about updates to the workflow registries specified in 'update_registries'.",
          type: 'boolean',
          default: true,
        },
        lifemonitor_instance: {
          description: "Specify the LifeMonitor instance -- 'production' or 'developement' to be notified.",
          type: 'string',
          minLength: 1,
        },
      },
      required: ['name'],
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

/** Where a repository keeps it, at its root, in the order looked for (API.md 12; LifeMonitor also reads `lifemonitor.yml`). */
export const CONFIG_FILE_NAMES = [
  '.lifemonitor.yaml',
  '.lifemonitor.yml',
  'lifemonitor.yaml',
  'lifemonitor.yml',
] as const;

/** The file is a few lines; anything larger is not one. */
export const MAX_CONFIG_BYTES = 64 * 1024;

export interface PushRef {
  name: string;
  update_registries: string[];
  enable_notifications: boolean;
  lifemonitor_instance?: string;
}

/** A valid file, with LifeMonitor's defaults filled in (`validate`'s `data`). */
export interface LifemonitorConfig {
  name?: string;
  public: boolean;
  issues: { check?: boolean; include: string[]; exclude: string[] };
  push: { branches: PushRef[]; tags: PushRef[] };
}

/** `validate`'s reply (LifeMonitor's ValidationResult and ValidationError). */
export type ConfigValidation =
  { valid: true; data: LifemonitorConfig } | { valid: false; message: string; error: string };

// `minimum` on an object is a keyword of the wrong type, which LifeMonitor's validator ignores too.
const validator = new Ajv({ strict: false, allErrors: false }).compile<Record<string, unknown>>(
  LIFEMONITOR_CONFIG_SCHEMA,
);

/**
 * The YAML (or JSON, which is YAML) of a configuration file, parsed. Throws
 * DomainError('invalid_input') for text that is no YAML, several documents, or nothing at all
 * (LifeMonitor answers those with 400, "It should be a JSON or YAML file").
 */
export function parseConfigText(text: string): unknown {
  // Aliases are bounded by the library (maxAliasCount), which stops a "billion laughs" file.
  const document = parseDocument(text.replace(/^\uFEFF/, ''), { prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new DomainError(
      'invalid_input',
      `the file is neither YAML nor JSON: ${document.errors[0].message.split('\n')[0]}`,
    );
  }
  let data: unknown;
  try {
    data = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new DomainError(
      'invalid_input',
      `the file is neither YAML nor JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (
    data === null ||
    data === undefined ||
    data === '' ||
    (isRecord(data) && Object.keys(data).length === 0)
  ) {
    throw new DomainError('invalid_input', 'the file is empty: send a JSON or YAML configuration file');
  }
  return data;
}

/** Checks data against the schema; when valid, returns it with the schema's defaults filled in. */
export function validateConfig(data: unknown): ConfigValidation {
  if (validator(data)) {
    return { valid: true, data: withDefaults(data) };
  }
  const [first] = validator.errors ?? [];
  return first
    ? { valid: false, ...describe(first, data) }
    : {
        valid: false,
        message: 'the file does not match the schema',
        error: 'the file does not match the schema',
      };
}

/** The tag and branch globs a valid file follows (API.md 12: each `push` item's `name`). */
export function followOf(config: LifemonitorConfig): { tags: string[]; branches: string[] } {
  return {
    tags: config.push.tags.map((ref) => ref.name),
    branches: config.push.branches.map((ref) => ref.name),
  };
}

/**
 * What LifeMonitor's set_defaults gives a valid file: every object of the schema present, arrays
 * empty when absent, scalars with a default set to it when absent. Where LifeMonitor's version
 * replaced given values (a `false` became its default `true`, a given `update_registries` became
 * `[]`), the given value is kept.
 */
function withDefaults(data: Record<string, unknown>): LifemonitorConfig {
  const issues = isRecord(data.issues) ? data.issues : {};
  const push = isRecord(data.push) ? data.push : {};
  // Members in the schema's order, as LifeMonitor's reply has them.
  return {
    ...(typeof data.name === 'string' ? { name: data.name } : {}),
    public: typeof data.public === 'boolean' ? data.public : false,
    issues: {
      ...(typeof issues.check === 'boolean' ? { check: issues.check } : {}),
      include: strings(issues.include),
      exclude: strings(issues.exclude),
    },
    push: { branches: pushRefs(push.branches), tags: pushRefs(push.tags) },
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function pushRefs(value: unknown): PushRef[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value.filter(isRecord).map((item) => {
    const ref: PushRef = {
      name: String(item.name),
      update_registries: strings(item.update_registries),
      enable_notifications: typeof item.enable_notifications === 'boolean' ? item.enable_notifications : true,
    };
    if (typeof item.lifemonitor_instance === 'string') {
      ref.lifemonitor_instance = item.lifemonitor_instance;
    }
    return ref;
  });
}

/**
 * A short message naming where the file is wrong (LifeMonitor's `message`) and a longer one with
 * the schema rule and the value found (its `error`).
 */
function describe(error: ErrorObject, data: unknown): { message: string; error: string } {
  const path = error.instancePath;
  const where = path === '' ? 'the file' : `'${path.slice(1).replace(/\//g, '.')}'`;
  const params = error.params as Record<string, unknown>;
  const extra =
    error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string'
      ? ` ('${params.additionalProperty}')`
      : '';
  const message = `${where} ${error.message ?? 'is not valid'}${extra}`;
  const value = JSON.stringify(valueAt(data, path)) ?? 'nothing';
  return {
    message,
    error: `${message}. Failed validating '${error.keyword}' in schema ${error.schemaPath}; on instance ${path === '' ? '/' : path}: ${value.length > 200 ? `${value.slice(0, 200)}…` : value}`,
  };
}

function valueAt(data: unknown, pointer: string): unknown {
  let value = data;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    value = isRecord(value) || Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/**
 * `validate` (API.md 12): the bytes of a configuration file, YAML or JSON, checked. Throws
 * DomainError('invalid_input') for no body, one that is not UTF-8 text, or text that is no YAML.
 */
export function checkConfigFile(body: Buffer | undefined): ConfigValidation {
  if (body === undefined || body.length === 0) {
    throw new DomainError('invalid_input', 'the body is empty: send the YAML or JSON of a .lifemonitor.yaml');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new DomainError(
      'invalid_input',
      'the body is not UTF-8 text: send the YAML or JSON of a .lifemonitor.yaml',
    );
  }
  return validateConfig(parseConfigText(text));
}
