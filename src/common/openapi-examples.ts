/**
 * The things the OpenAPI document's examples speak of: one workflow with its version, suite,
 * instance and build, a user, a key, a channel, a notification, a job, a node. Path parameters
 * take these as examples, so that Swagger UI's "Try it out" sends a request that works against
 * a service holding them (the document's example test seeds exactly these), and replies show the
 * same values.
 */
export const EXAMPLE = {
  workflowUuid: '1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67',
  version: '1.0',
  suiteUuid: '5c9d2b7e-1a3f-4c8e-b2d1-9e8f7a6b5c4d',
  instanceUuid: '7a1f7f3e-2b1c-4d7e-9a4b-1c2d3e4f5a6b',
  buildId: '8765_1',
  /** A managed instance of the example suite (API.md 17) and its queued run, which can be cancelled. */
  managedInstanceUuid: '3e0c6a52-9d4f-4b8e-a1c7-5f2d8b9e0a14',
  managedBuildId: 'm-1',
  userId: 7,
  apiKeyId: 3,
  channelId: 3,
  notificationUuid: '0b7e0f0e-3f5d-4d7a-9a55-3c9a3f0d2c11',
  jobId: '0b6f2d4e-7c1a-4f7e-9d3b-2a5c8e1f4b60',
  nodeId: '3',
  cloud: 'default',
  /** The example workflow's descriptor type in GA4GH TRS (API.md 10.2): its main workflow is Galaxy's. */
  descriptorType: 'GALAXY',
  /** A file of the example workflow's crate, by its path from the main workflow's folder (TRS). */
  crateFile: 'test/planemo.yml',
  /** A registry (API.md 10.1), its OAuth2 client, and a workflow and a user of its own. */
  registryUuid: '44abf3e6-5eab-41f7-a31a-7231ef323765',
  registryClientId: 'fWWLbOAw0pLlRKIWOQlkO4b4',
  registryClientSecret: 'Ne1kK6NljWRayqzDfgMWBfVplkRGZto6MCjdfhK1jY7',
  registryWorkflowId: '293',
  /** An application a user registered (API.md 15) and where it is sent back to. */
  appClientId: 'Yk3r9cPq0L2mVb7TzX1aQw5e',
  appRedirectUri: 'https://app.example.org/oauth/callback',
  registryUserId: '2',
  /** A GitHub repository holding a Workflow Testing RO-Crate (API.md 7.1). */
  repositoryLink: 'https://github.com/iwc-workflows/sars-cov-2-consensus-from-variation',
} as const;
