import { STATUS_CODES } from 'node:http';
import { Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
import { isRecord } from '../../common/is-record.js';
import { OutboundError, readBody, sendRequest } from '../../common/net/http-client.js';
import { AppConfig } from '../../config/app-config.js';
import {
  RegisterRegistryClient,
  type RegistryAddress,
  type RegistryClient,
  type RegistryWorkflow,
} from './registry-client.js';

/** A workflow's JSON:API document is a few KiB; a list of them, a few hundred. */
const MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * SEEK (WorkflowHub and other installations) through its JSON:API, as LifeMonitor reads it
 * (crs4/life_monitor, lifemonitor/api/models/registries/seek.py): `GET {uri}/workflows/{id}?format=json`
 * (uuid `data.meta.uuid`, title `data.attributes.title`), `GET {uri}/workflows?format=json`, and
 * crates at `{uri}/workflows/{id}/ro_crate?version={version}`. A personal token goes as
 * `Authorization: Token <t>`. Every call passes the private-address guard and the download
 * time limit of any link.
 */
@RegisterRegistryClient()
@Injectable()
export class SeekClient implements RegistryClient {
  readonly type = 'seek';

  constructor(private readonly config: AppConfig) {}

  async workflow(registry: RegistryAddress, identifier: string, token?: string): Promise<RegistryWorkflow> {
    const document = await this.read(
      registry,
      `/workflows/${encodeURIComponent(identifier)}?format=json`,
      token,
      `workflow ${identifier}`,
    );
    const data = isRecord(document) ? document.data : undefined;
    const workflow = isRecord(data) ? toWorkflow(data) : undefined;
    if (!workflow || workflow.uuid === null) {
      throw new DomainError(
        'upstream_failed',
        `${registry.name} answered workflow ${identifier} without data.meta.uuid and data.attributes.title (not SEEK's JSON:API)`,
      );
    }
    return workflow;
  }

  async workflows(registry: RegistryAddress, token?: string): Promise<RegistryWorkflow[]> {
    const document = await this.read(registry, '/workflows?format=json', token, 'its workflows');
    const data = isRecord(document) ? document.data : undefined;
    if (!Array.isArray(data)) {
      throw new DomainError(
        'upstream_failed',
        `${registry.name} answered its workflows without a data array`,
      );
    }
    return data.flatMap((item: unknown) => {
      const workflow = isRecord(item) ? toWorkflow(item) : undefined;
      return workflow ? [workflow] : [];
    });
  }

  crate(
    registry: RegistryAddress,
    identifier: string,
    version: string,
    token?: string,
  ): { link: string; authorization?: string } {
    const link = `${registry.uri}/workflows/${encodeURIComponent(identifier)}/ro_crate?version=${encodeURIComponent(version)}`;
    return { link, authorization: token === undefined ? undefined : `Token ${token}` };
  }

  page(registry: RegistryAddress, identifier: string, version?: string): string {
    const page = `${registry.uri}/workflows/${encodeURIComponent(identifier)}`;
    return version === undefined ? page : `${page}?version=${encodeURIComponent(version)}`;
  }

  private async read(
    registry: RegistryAddress,
    path: string,
    token: string | undefined,
    what: string,
  ): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/vnd.api+json, application/json' };
    if (token !== undefined) {
      headers.authorization = `Token ${token}`;
    }
    const { downloadTimeoutMs, allowPrivateNetworkLinks } = this.config.registry;
    let body: Buffer;
    try {
      const response = await sendRequest(`${registry.uri}${path}`, {
        headers,
        timeoutMs: downloadTimeoutMs,
        allowPrivate: allowPrivateNetworkLinks,
      });
      if (response.status === 404 || response.status === 403) {
        response.body.destroy();
        throw new DomainError(
          'not_found',
          `${registry.name} has no ${what} (or does not show it to us): it answered ${response.status}`,
        );
      }
      if (response.status < 200 || response.status >= 300) {
        response.body.destroy();
        const phrase = STATUS_CODES[response.status];
        throw new DomainError(
          'upstream_failed',
          `${registry.name} answered ${response.status}${phrase ? ` ${phrase}` : ''} for ${what}`,
        );
      }
      body = await readBody(response.body, MAX_DOCUMENT_BYTES);
    } catch (error) {
      if (error instanceof OutboundError) {
        if (error.reason === 'timeout') {
          throw new DomainError(
            'gateway_timeout',
            `${registry.name} did not answer for ${what} within ${Math.round(downloadTimeoutMs / 1000)} s`,
          );
        }
        const detail =
          error.reason === 'too_large' ? `an answer larger than ${MAX_DOCUMENT_BYTES} bytes` : error.message;
        throw new DomainError('upstream_failed', `${registry.name} failed for ${what}: ${detail}`);
      }
      throw error;
    }
    try {
      return JSON.parse(body.toString('utf8'));
    } catch {
      throw new DomainError(
        'upstream_failed',
        `${registry.name} answered ${what} with something that is not JSON`,
      );
    }
  }
}

/** A JSON:API workflow resource; undefined without an id and a title. */
function toWorkflow(data: Record<string, unknown>): RegistryWorkflow | undefined {
  const id = data.id;
  const attributes = isRecord(data.attributes) ? data.attributes : {};
  const meta = isRecord(data.meta) ? data.meta : {};
  const title = attributes.title;
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof title !== 'string') {
    return undefined;
  }
  const uuid = typeof meta.uuid === 'string' && UUID.test(meta.uuid) ? meta.uuid.toLowerCase() : null;
  const versions = Array.isArray(attributes.versions)
    ? attributes.versions.flatMap((v: unknown) =>
        isRecord(v) && (typeof v.version === 'string' || typeof v.version === 'number')
          ? [String(v.version)]
          : [],
      )
    : [];
  const latest = attributes.latest_version ?? attributes.version;
  return {
    identifier: String(id),
    uuid,
    title,
    latestVersion: typeof latest === 'string' || typeof latest === 'number' ? String(latest) : null,
    versions,
  };
}
