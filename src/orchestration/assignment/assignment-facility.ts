/** An assignment of a node to a user and an application (`vm_type`), as a facility reports it. */
export interface Assignment {
  /** The facility's id of the assignment (the `id` of the contract's assign and release replies). */
  readonly id: number;
  readonly cloud: string;
  readonly nodeId: string;
  /** The node's name when it was assigned. */
  readonly hostname: string;
  readonly user: string;
  readonly vmType: string;
  readonly assignedAt: Date;
}

/** What a release reports: which assignment ended. */
export interface ReleasedAssignment {
  readonly id: number;
  readonly cloud: string;
  readonly nodeId: string;
}

export interface AssignRequest {
  readonly cloud: string;
  readonly nodeId: string;
  readonly hostname: string;
  readonly user: string;
  readonly vmType: string;
}

/**
 * The VM-assignment facility behind assign and release (the seed's "separate facility"). Chosen by
 * configuration: the built-in database one, or an external one over HTTP (ASSIGNMENT_FACILITY_URL).
 * Implementations throw DomainError; an external facility's failures are 'upstream_failed'.
 */
export interface AssignmentFacility {
  /** Starts an assignment. Throws DomainError 'conflict' when the node has an active assignment. */
  assign(request: AssignRequest): Promise<Assignment>;

  /** Ends the node's active assignment. Throws DomainError 'not_found' when it has none. */
  release(cloud: string, nodeId: string): Promise<ReleasedAssignment>;

  /** The active assignments of a cloud, oldest first. */
  listActive(cloud: string): Promise<Assignment[]>;
}

/** Nest token of the configured AssignmentFacility. */
export const ASSIGNMENT_FACILITY = Symbol('ASSIGNMENT_FACILITY');
