/**
 * The tags of the OpenAPI document, by what a person looks for in it: Swagger UI shows one
 * section per tag, in this order. A controller (or a method) names its tag with
 * `@ApiTags(TAGS.x)`; the finishing pass of the document lists the tags an operation uses, with
 * these descriptions, and groups them by area (`x-tagGroups`, read by Redoc).
 */
export const TAGS = {
  auth: 'auth',
  users: 'users',
  apiKeys: 'API keys',
  oauth2: 'OAuth2 and applications',
  workflows: 'workflows',
  versions: 'versions',
  suites: 'suites and instances',
  status: 'test status and builds',
  badges: 'badges and status pages',
  subscriptions: 'subscriptions and notifications',
  channels: 'notification channels',
  webhooks: 'GitHub integration',
  trs: 'GA4GH TRS',
  registries: 'registries',
  clouds: 'clouds',
  vms: 'VMs',
  assignments: 'VM assignments',
  keyPairs: 'key pairs and addresses',
  usage: 'quotas and usage',
  service: 'service',
} as const;

export type TagName = (typeof TAGS)[keyof typeof TAGS];

const AUTH_ERRORS = 'Errors are `{"error": {"code", "title", "message"}}`.';
const REGISTRY_ERRORS = 'Errors are `application/problem+json`.';
const ORCHESTRATION_ERRORS =
  'Needs a token of role agent or admin (also accepted as `auth_token` in the query or the JSON body). Replies are ' +
  '`{"status": "ok", …}`; errors are the envelope `{"status": "error", "message", "status_code", …}`.';

export interface TagGroup {
  /** The area (API.md 0), as the group's heading. */
  name: string;
  tags: { name: TagName; description: string }[];
}

export const TAG_GROUPS: readonly TagGroup[] = [
  {
    name: 'A. Tokens and users',
    tags: [
      {
        name: TAGS.auth,
        description: `Log in for a token (\`POST /api/v1/auth\`), check it, log out. ${AUTH_ERRORS}`,
      },
      {
        name: TAGS.users,
        description:
          'The caller (`GET /users/current`, whose errors are `application/problem+json`), and the users of the ' +
          `service (role admin). ${AUTH_ERRORS}`,
      },
      {
        name: TAGS.apiKeys,
        description:
          "The caller's API keys (API.md 7.3): a key works wherever a token does, as `Authorization: ApiKey <key>` " +
          `or \`X-API-Key: <key>\`. ${REGISTRY_ERRORS}`,
      },
      {
        name: TAGS.oauth2,
        description:
          'The OAuth2 authorization server (API.md 10.1, 15): the one token endpoint of registry clients and of ' +
          "applications people register, the authorization code flow with PKCE and refresh tokens, the server's " +
          "metadata (RFC 8414), and the caller's applications. The token endpoint's errors are RFC 6749's " +
          '`{"error", "error_description"}`; those of `/users/current/clients` are `application/problem+json`.',
      },
    ],
  },
  {
    name: 'B. Workflow registry and test monitoring',
    tags: [
      {
        name: TAGS.workflows,
        description:
          'Register a Workflow Testing RO-Crate by link (`POST /users/current/workflows`), list, read, rename, ' +
          `publish and delete workflows (LifeMonitor paths and operation ids). ${REGISTRY_ERRORS}`,
      },
      {
        name: TAGS.versions,
        description: `A workflow's versions, their RO-Crate archives and metadata. ${REGISTRY_ERRORS}`,
      },
      {
        name: TAGS.suites,
        description:
          'The test suites a crate names, and their test instances (a suite on one CI service): read them, add, ' +
          `change or remove instances. ${REGISTRY_ERRORS}`,
      },
      {
        name: TAGS.status,
        description:
          'The test status the service keeps from the CI services: per workflow, suite and instance, the latest ' +
          `builds, one build, statistics and history. ${REGISTRY_ERRORS}`,
      },
      {
        name: TAGS.badges,
        description:
          'Status badges to embed in other pages (SVG, or JSON for shields.io), the token of a private badge, and ' +
          'the HTML status pages.',
      },
      {
        name: TAGS.subscriptions,
        description:
          'Follow a workflow (which events), and read, mark and delete the notifications it raises. ' +
          REGISTRY_ERRORS,
      },
      {
        name: TAGS.channels,
        description: `Where notifications go besides the API (e-mail, webhook, Slack), and each channel's deliveries. ${REGISTRY_ERRORS}`,
      },
      {
        name: TAGS.registries,
        description:
          'Workflow registries such as WorkflowHub (API.md 10.1): their OAuth2 clients (tokens from `POST /oauth2/token`, ' +
          "under OAuth2), what a registry's token does for it, and a user's link to a registry. " +
          REGISTRY_ERRORS,
      },
      {
        name: TAGS.webhooks,
        description:
          "GitHub's webhook deliveries (`workflow_run`), signed with GITHUB_WEBHOOK_SECRET, and the schema and " +
          `validator of a repository's \`.lifemonitor.yaml\`. ${REGISTRY_ERRORS}`,
      },
      {
        name: TAGS.trs,
        description:
          'GA4GH Tool Registry Service 2.1.0, read-only, at `/ga4gh/trs/v2` (also at `/api/ga4gh/v2`, the path ' +
          "Dockstore's clients and cwltool build): each workflow a tool, its versions the tool's versions, their " +
          'descriptors and files read from the stored crates. Public workflows for anybody; with a token, also ' +
          'those the caller may see. Errors are `{"code", "message"}`.',
      },
    ],
  },
  {
    name: 'C. VM orchestration',
    tags: [
      {
        name: TAGS.clouds,
        description: `The configured clouds, and their nodes, images and sizes. ${ORCHESTRATION_ERRORS}`,
      },
      {
        name: TAGS.vms,
        description: `Start, stop, reboot and power VMs, and follow the jobs that start them. ${ORCHESTRATION_ERRORS}`,
      },
      {
        name: TAGS.assignments,
        description: `Assign a VM to a user, extend its lease, release it. ${ORCHESTRATION_ERRORS}`,
      },
      {
        name: TAGS.keyPairs,
        description: `Your SSH key pairs in a cloud, and public addresses of VMs (floating IPs, Elastic IPs). ${ORCHESTRATION_ERRORS}`,
      },
      {
        name: TAGS.usage,
        description:
          'Node-hours and vCPU-hours per user and cloud, and the quotas they are held to (set by an admin under ' +
          `\`/api/v1/users/{id}/quota\`, whose errors are area A's). ${ORCHESTRATION_ERRORS}`,
      },
    ],
  },
  {
    name: 'The service',
    tags: [
      {
        name: TAGS.service,
        description:
          'For operators: liveness, readiness and Prometheus metrics. No user token; `/metrics` takes ' +
          '`METRICS_TOKEN` when that is set.',
      },
    ],
  },
];
