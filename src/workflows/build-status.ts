/** The normalised states of a build, whatever CI service ran it (API.md 2.6). */
export const BUILD_STATUSES = ['passed', 'failed', 'error', 'aborted', 'running', 'waiting'] as const;

export type BuildStatus = (typeof BUILD_STATUSES)[number];
