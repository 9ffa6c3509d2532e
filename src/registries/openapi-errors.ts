import { invalidMemberExample, problemExample, ProblemDto } from '../common/dto/error-bodies.dto.js';
import { EXAMPLE } from '../common/openapi-examples.js';

/**
 * The error replies of the registry operations as the document shows them: each with a body the
 * service sends for it (the example registry `workflowhub`, its workflow, its uuid).
 */
const REGISTRY = 'workflowhub';
const WORKFLOW = `workflow ${EXAMPLE.registryWorkflowId}`;

/** A documented error reply: its schema, its cause, the body the service sends. */
export interface DocumentedProblem {
  type: typeof ProblemDto;
  description: string;
  example: object;
}

const problem = (status: number, description: string, detail: string): DocumentedProblem => ({
  type: ProblemDto,
  description,
  example: problemExample(status, detail),
});

export const REGISTRY_ERRORS = {
  badInput: {
    type: ProblemDto,
    description: 'A bad body or parameter',
    example: invalidMemberExample('registry_uuid', 'registry_uuid must be a UUID'),
  },
  notAdmin: problem(403, 'Not an admin', 'This operation needs the role admin'),
  nameTaken: problem(409, 'A registry of that name exists', `A registry named '${REGISTRY}' exists`),
  accountNameTaken: problem(
    409,
    "Another user has a name the registry's accounts are renamed to (delete or rename that user)",
    `The username 'deleted-registry:${EXAMPLE.registryUuid}' is taken`,
  ),
  noRegistry: problem(404, 'No such registry', `No registry ${EXAMPLE.registryUuid}`),
  noRegistryOrWorkflow: problem(
    404,
    'No such registry, or no such workflow on it',
    `${REGISTRY} has no ${WORKFLOW} (or does not show it to us): it answered 404`,
  ),
  noWorkflow: problem(
    404,
    'The registry has no such workflow (or does not show it)',
    `${REGISTRY} has no ${WORKFLOW} (or does not show it to us): it answered 404`,
  ),
  versionTaken: problem(
    409,
    "The version exists, or the uuid is another's",
    `The workflow 86da0a30-d2cd-013a-a07d-000c29a94011 already has a version '1'`,
  ),
  notLinked: problem(
    403,
    'The caller has not linked their account on the registry',
    `Link your account on the registry ${REGISTRY} first: PUT /users/current/registries/${EXAMPLE.registryUuid} with your personal token`,
  ),
  upstream: problem(
    502,
    'The registry failed, or answered something unusable',
    `${REGISTRY} answered 500 Internal Server Error for ${WORKFLOW}`,
  ),
  upstreamTimeout: problem(
    504,
    'The registry did not answer in time',
    `${REGISTRY} did not answer for ${WORKFLOW} within 30 s`,
  ),
};

/** A registry token without the scope an operation needs, or a person's credentials (RFC 6750's insufficient_scope). */
export function insufficientScope(scope: string, description = 'insufficient_scope'): DocumentedProblem {
  return problem(
    403,
    description,
    `insufficient_scope: this operation needs a token with the scope '${scope}'`,
  );
}
