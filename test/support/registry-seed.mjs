// Plain JavaScript: the scale benchmark (plain node) and the e2e specs (ts-jest) share it.
//
// Bulk seed of the registry, straight into the database with multi-row INSERTs: N workflows of
// one version each (with one issue of the repository checks), with one suite, one GitHub instance
// (on one shared service), its check state and three builds, as registration and a first check
// would leave them. The uuids are derived
// from the workflow's index, so a caller can address any seeded workflow without reading back.

/** Rows per INSERT: the widest row has 14 values, well under SQLite's 32,766 parameters. */
const ROWS_PER_INSERT = 500;

/** The uuid of the seeded thing of `kind` for workflow number `index`. */
export function seededUuid(kind, index) {
  const prefix = { workflow: 'a', version: 'b', suite: 'c', instance: 'd', service: 'e' }[kind];
  if (!prefix) {
    throw new Error(`no seeded ${kind}`);
  }
  return `${prefix}0000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`;
}

/** What the seeded version of every workflow is called. */
export const SEEDED_VERSION = '1.0';

/** The stored test status of every seeded version: its instance's latest finished build passed. */
const SEEDED_STATUS = 'all_passing';

function datetime(date) {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

async function nextId(exec, table, column = 'id') {
  const [row] = await exec(`SELECT MAX(${column}) AS n FROM ${table}`, []);
  return Number(row?.n ?? 0) + 1;
}

async function insertRows(exec, table, columns, rows) {
  for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
    const chunk = rows.slice(at, at + ROWS_PER_INSERT);
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    await exec(
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')}`,
      chunk.flat(),
    );
  }
}

/**
 * What every seeded version says of its main workflow: that of the crate the callers store as
 * `archive`, test/fixtures/crates/lifemonitor-example-wf-crate.zip.
 */
export const SEEDED_MAIN_WORKFLOW = { path: 'sort-and-change-case.ga', language: 'GALAXY' };

/**
 * Seeds workflows number `from` to `from + count - 1` owned by `ownerId` (public ones when
 * `isPublic`). `exec(sql, params)` runs one statement and resolves to its rows (for a SELECT);
 * run it inside a transaction. `archive` ({sha256, size}) is the stored archive every version
 * points at (the caller puts the file in the store); `serviceUrl` the GitHub API base of the
 * shared service. With `registry` ({id, uri}: a row of `registries`), that registry sent them
 * (API.md 10.1): each is its workflow number `index` there, with its page as the version's origin.
 */
export async function seedWorkflows(
  exec,
  { ownerId, from = 0, count, archive, serviceUrl, now = new Date(), isPublic = false, registry },
) {
  const service = await exec('SELECT id FROM test_services WHERE type = ? AND url = ?', [
    'github',
    serviceUrl,
  ]);
  let serviceId = Number(service[0]?.id ?? 0);
  if (!serviceId) {
    serviceId = await nextId(exec, 'test_services');
    await exec('INSERT INTO test_services (id, uuid, type, url) VALUES (?, ?, ?, ?)', [
      serviceId,
      seededUuid('service', serviceId),
      'github',
      serviceUrl,
    ]);
  }
  const ids = {
    workflow: await nextId(exec, 'workflows'),
    version: await nextId(exec, 'workflow_versions'),
    suite: await nextId(exec, 'test_suites'),
    instance: await nextId(exec, 'test_instances'),
  };
  const registered = datetime(now);
  const nextCheck = datetime(new Date(now.getTime() + 24 * 3600_000));
  const batch = 5_000;
  for (let start = 0; start < count; start += batch) {
    const workflows = [];
    const versions = [];
    const suites = [];
    const instances = [];
    const states = [];
    const builds = [];
    const issues = [];
    for (let k = start; k < Math.min(count, start + batch); k++) {
      const index = from + k;
      const workflowId = ids.workflow + k;
      const versionId = ids.version + k;
      const suiteId = ids.suite + k;
      const instanceId = ids.instance + k;
      workflows.push([
        workflowId,
        seededUuid('workflow', index),
        ownerId,
        versionId,
        registered,
        isPublic ? 1 : 0,
        registry ? registry.id : null,
        registry ? String(index) : null,
        SEEDED_STATUS,
      ]);
      versions.push([
        versionId,
        seededUuid('version', index),
        workflowId,
        SEEDED_VERSION,
        `seeded workflow ${index}`,
        `http://127.0.0.1:9/crates/${index}.crate.zip`,
        archive.sha256,
        archive.size,
        ownerId,
        registered,
        SEEDED_MAIN_WORKFLOW.path,
        SEEDED_MAIN_WORKFLOW.language,
        registry ? `${registry.uri}/workflows/${index}?version=${SEEDED_VERSION}` : null,
        SEEDED_STATUS,
      ]);
      issues.push([
        versionId,
        'best_practices.MissingReadme',
        'Missing README',
        'The crate has no README file at its root.',
        'warning',
      ]);
      suites.push([
        suiteId,
        seededUuid('suite', index),
        versionId,
        '#suite1',
        'suite',
        'test/planemo.yml',
        'planemo',
        '>=0.74',
      ]);
      instances.push([
        instanceId,
        seededUuid('instance', index),
        suiteId,
        serviceId,
        '#instance1',
        'GitHub Actions',
        `repos/seeded/wf${index}/actions/workflows/ci.yml`,
        0,
      ]);
      states.push([instanceId, serviceId, versionId, nextCheck, 0, registered, 0]);
      for (let b = 0; b < 3; b++) {
        const started = new Date(now.getTime() - (3 - b) * 3600_000);
        builds.push([
          instanceId,
          `${index}${b}`,
          b === 1 ? 'failed' : 'passed',
          datetime(started),
          60 + b,
          `https://github.com/seeded/wf${index}/actions/runs/${index}${b}`,
        ]);
      }
    }
    await insertRows(
      exec,
      'workflows',
      [
        'id',
        'uuid',
        'owner_id',
        'latest_version_id',
        'created_at',
        'is_public',
        'registry_id',
        'registry_identifier',
        'test_status',
      ],
      workflows,
    );
    await insertRows(
      exec,
      'workflow_versions',
      [
        'id',
        'uuid',
        'workflow_id',
        'version',
        'name',
        'roc_link',
        'archive_sha256',
        'archive_size',
        'submitter_id',
        'registered_at',
        'main_workflow',
        'workflow_language',
        'origin_link',
        'test_status',
      ],
      versions,
    );
    await insertRows(
      exec,
      'workflow_version_issues',
      ['version_id', 'issue_type', 'name', 'description', 'severity'],
      issues,
    );
    await insertRows(
      exec,
      'test_suites',
      ['id', 'uuid', 'version_id', 'roc_suite', 'name', 'definition_path', 'engine_type', 'engine_version'],
      suites,
    );
    await insertRows(
      exec,
      'test_instances',
      ['id', 'uuid', 'suite_id', 'service_id', 'roc_instance', 'name', 'resource', 'managed'],
      instances,
    );
    await insertRows(
      exec,
      'test_check_states',
      [
        'instance_id',
        'service_id',
        'version_id',
        'next_check_at',
        'failure_count',
        'last_checked_at',
        'last_check_failed',
      ],
      states,
    );
    await insertRows(
      exec,
      'builds',
      ['instance_id', 'build_id', 'status', 'started_at', 'duration_seconds', 'url'],
      builds,
    );
  }
}

/** The owner id of the seeded starts: nobody's, so the users' own reads find none of them. */
export const SEEDED_MACHINES_OWNER = 1_000_000;

/**
 * Seeds what area C keeps of `count` starts as years of use would leave them: the starts (most of them
 * stopped long ago, spread over many owners with quotas, a few held), their public addresses, and
 * key pairs of other dummy clouds. Run it inside a transaction.
 */
export async function seedMachines(exec, { count, now = new Date() }) {
  const hour = 3600_000;
  // The owners, with quotas of their own, among many more users who started nothing.
  const owners = Array.from({ length: 2000 }, (_, k) => SEEDED_MACHINES_OWNER + k);
  await insertRows(
    exec,
    'users',
    ['id', 'username', 'password_hash', 'roles'],
    owners.map((id, k) => [id, `owner${k}`, '!', 'user']),
  );
  await insertRows(
    exec,
    'user_quotas',
    ['user_id', 'max_nodes', 'max_vcpus', 'max_ram_mib'],
    owners.map((id) => [id, 10, 40, 65_536]),
  );
  const jobs = [];
  const addresses = [];
  for (let i = 0; i < count; i++) {
    const created = new Date(now.getTime() - (count - i) * 6 * hour);
    const held = i % 50 === 0;
    jobs.push([
      `f0000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
      `plan-${i % 7}`,
      SEEDED_MACHINES_OWNER + (i % 97),
      `owner${i % 97}`,
      'done',
      1 + (i % 4),
      512 * (1 + (i % 4)),
      held ? null : datetime(new Date(created.getTime() + 2 * hour)),
      '{"name":"plan","image":"plan","size":"plan"}',
      `node-${i}`,
      datetime(created),
    ]);
    if (held) {
      addresses.push([
        `plan-${i % 7}`,
        `node-${i}`,
        `198.18.${(i >> 8) & 255}.${i & 255}`,
        datetime(created),
      ]);
    }
  }
  await insertRows(
    exec,
    'vm_jobs',
    [
      'id',
      'cloud',
      'owner_id',
      'owner_name',
      'state',
      'vcpus',
      'ram_mib',
      'stopped_at',
      'request',
      'node_id',
      'created_at',
    ],
    jobs,
  );
  await insertRows(exec, 'vm_addresses', ['cloud', 'node_id', 'address', 'created_at'], addresses);
  const clouds = Array.from({ length: 20 }, (_, c) => [`plan-keys-${c}`, 1]);
  await insertRows(exec, 'dummy_clouds', ['name', 'next_id'], clouds);
  const keys = [];
  for (const [cloud] of clouds) {
    for (let k = 0; k < 50; k++) {
      keys.push([cloud, `owner${k}.key`, `SHA256:plan${k}`, 'ssh-ed25519 AAAA plan']);
    }
  }
  await insertRows(exec, 'dummy_key_pairs', ['cloud', 'name', 'fingerprint', 'public_key'], keys);
}

/**
 * Seeds the managed runs years of use would leave (API.md 17) on the first `instances` instances
 * (by id): `count` runs, nearly all long finished (no longer due), and `queued` of them queued
 * and due now, some held by a runner's claim.
 */
export async function seedManagedRuns(exec, { count, instances, queued, now = new Date() }) {
  const ids = (await exec(`SELECT id FROM test_instances ORDER BY id LIMIT ${Number(instances)}`, [])).map(
    (row) => Number(row.id),
  );
  const hour = 3600_000;
  const runs = [];
  for (let i = 0; i < count; i++) {
    const open = i >= count - queued;
    const at = new Date(now.getTime() - (count - i) * hour);
    const claimed = open && i % 3 === 0;
    runs.push([
      ids[i % ids.length],
      i % 10 === 0 ? 'cluster' : 'local',
      'cwltool',
      'f'.repeat(64),
      'tests/test.cwltest.yml',
      open ? 'queued' : i % 4 === 0 ? 'failed' : 'passed',
      datetime(at),
      open ? null : datetime(new Date(at.getTime() + 60_000)),
      open ? null : datetime(new Date(at.getTime() + 600_000)),
      datetime(open ? at : new Date(at.getTime() + 600_000)),
      open ? datetime(at) : null,
      claimed ? 'plan-runner#1' : null,
      claimed ? datetime(new Date(now.getTime() + hour)) : null,
      open ? 0 : 1,
    ]);
  }
  await insertRows(
    exec,
    'managed_runs',
    [
      'instance_id',
      'executor',
      'engine',
      'archive_sha256',
      'definition_path',
      'status',
      'queued_at',
      'started_at',
      'finished_at',
      'changed_at',
      'due_at',
      'claim_owner',
      'claim_until',
      'attempts',
    ],
    runs,
  );
}
