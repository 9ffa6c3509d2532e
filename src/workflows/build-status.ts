/** The normalised states of a build, whatever CI service ran it (API.md 2.6). */
export const BUILD_STATUSES = ['passed', 'failed', 'error', 'aborted', 'running', 'waiting'] as const;

export type BuildStatus = (typeof BUILD_STATUSES)[number];

/** Why a failing build failed (API.md 16): the runner or CI service, the tests, or not known. */
export const FAILURE_CLASSES = ['infrastructure', 'test', 'unknown'] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];
