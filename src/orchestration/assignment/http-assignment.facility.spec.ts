import { AssignmentFacilityFake } from '../../../test/fakes/assignment-facility-fake.js';
import { HttpAssignmentFacility } from './http-assignment.facility.js';

let fake: AssignmentFacilityFake;
let facility: HttpAssignmentFacility;

beforeEach(async () => {
  fake = await AssignmentFacilityFake.start();
  facility = new HttpAssignmentFacility(fake.url, {
    timeoutMs: 500,
    now: () => new Date('2025-01-01T00:00:00Z'),
  });
});

afterEach(async () => {
  await fake.close();
});

const request = { cloud: 'c 1', nodeId: 'a/b', hostname: 'h', user: 'u', vmType: 't' };

describe('HttpAssignmentFacility', () => {
  it('speaks the documented protocol, percent-encoding path segments', async () => {
    const assigned = await facility.assign(request);
    expect(assigned).toEqual({ ...request, id: 100, assignedAt: new Date(fake.assignments[0].assigned_at) });
    await expect(facility.listActive('c 1')).resolves.toEqual([assigned]);
    await expect(facility.release('c 1', 'a/b')).resolves.toEqual({ id: 100, cloud: 'c 1', nodeId: 'a/b' });
    expect(fake.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /assignments',
      'GET /assignments?cloud=c%201',
      'DELETE /assignments/c%201/a%2Fb',
    ]);
    expect(fake.requests[0].body).toEqual({
      cloud: 'c 1',
      node: 'a/b',
      hostname: 'h',
      user: 'u',
      vm_type: 't',
    });
  });

  it('turns 409 into conflict and 404 into not_found', async () => {
    await facility.assign(request);
    await expect(facility.assign(request)).rejects.toMatchObject({ kind: 'conflict' });
    await facility.release('c 1', 'a/b');
    await expect(facility.release('c 1', 'a/b')).rejects.toMatchObject({ kind: 'not_found' });
  });

  it.each([
    ['status', 'the facility answered 503'],
    ['garbage', 'the answer has no integer id'],
    ['down', 'is unreachable'],
    ['hang', 'did not answer within 1 s'],
  ] as const)('reports %s as upstream_failed naming what failed', async (mode, detail) => {
    fake.fail(mode, 503);
    const failure = facility.assign(request);
    await expect(failure).rejects.toMatchObject({ kind: 'upstream_failed' });
    await expect(failure).rejects.toThrow(`Assignment facility: assigning node a/b of cloud 'c 1' failed:`);
    await expect(failure).rejects.toThrow(detail);
  });
});
