import { crateMetadata } from '../../../test/support/registry.js';
import { checkedCrate } from '../../../test/support/checked-crate.js';
import {
  crateFilePath,
  MissingLicenseCheck,
  MissingReadmeCheck,
  MissingWorkflowFileCheck,
} from './crate-files.checks.js';

/** crateMetadata's graph, changed by `edit` on its entities by id. */
function metadataWith(edit: (byId: Map<string, Record<string, unknown>>) => void): object {
  const metadata = crateMetadata() as { '@graph': Record<string, unknown>[] };
  edit(new Map(metadata['@graph'].map((node) => [node['@id'] as string, node])));
  return metadata;
}

const ALL_FILES = ['ro-crate-metadata.json', 'workflow.ga', 'test/planemo.yml', 'README.md', 'LICENSE'];

describe('MissingWorkflowFileCheck', () => {
  const check = new MissingWorkflowFileCheck();

  it('passes a crate that holds its main workflow, or names one on the web', () => {
    expect(check.check(checkedCrate(crateMetadata(), ALL_FILES))).toEqual([]);
    const remote = metadataWith((byId) => {
      (byId.get('./') as Record<string, unknown>).mainEntity = { '@id': 'https://example.org/wf.cwl' };
    });
    expect(check.check(checkedCrate(remote, ['ro-crate-metadata.json']))).toEqual([]);
  });

  it('reports a main workflow the archive lacks, and a crate that names none', () => {
    expect(
      check.check(checkedCrate(crateMetadata(), ['ro-crate-metadata.json'])).map((f) => f.detail),
    ).toEqual(['the main workflow workflow.ga is not in the crate']);
    const none = metadataWith((byId) => {
      delete (byId.get('./') as Record<string, unknown>).mainEntity;
      (byId.get('workflow.ga') as Record<string, unknown>)['@type'] = 'File';
    });
    expect(check.check(checkedCrate(none, ALL_FILES)).map((f) => f.detail)).toEqual([
      'the crate names no main workflow (mainEntity)',
    ]);
  });

  it('reads an @id as a URI reference to a path in the crate', () => {
    expect(crateFilePath('./workflows/Input%20File.ga')).toBe('workflows/Input File.ga');
    expect(crateFilePath('wf.cwl#main')).toBe('wf.cwl');
    expect(crateFilePath('https://example.org/wf.cwl')).toBeUndefined();
    expect(crateFilePath('bad%zz.ga')).toBe('bad%zz.ga');
  });
});

describe('MissingLicenseCheck', () => {
  const check = new MissingLicenseCheck();

  it.each(['LICENSE', 'LICENSE.md', 'licence.txt', 'COPYING', 'LICENSE-APACHE'])(
    'passes a crate with %s at its root',
    (file) => {
      expect(check.check(checkedCrate(crateMetadata(), ['ro-crate-metadata.json', file]))).toEqual([]);
    },
  );

  it('passes a crate whose root dataset has a license, and reports one with neither (a warning)', () => {
    const licensed = metadataWith((byId) => {
      (byId.get('./') as Record<string, unknown>).license = { '@id': 'https://spdx.org/licenses/MIT' };
    });
    expect(check.check(checkedCrate(licensed, ['ro-crate-metadata.json']))).toEqual([]);
    const found = check.check(
      checkedCrate(crateMetadata(), ['ro-crate-metadata.json', 'docs/LICENSE', 'LICENSES.txt.bak/x']),
    );
    expect(found.map((f) => [f.type.id, f.type.severity])).toEqual([
      ['best_practices.MissingLicense', 'warning'],
    ]);
  });
});

describe('MissingReadmeCheck', () => {
  const check = new MissingReadmeCheck();

  it('passes a crate with a README at its root and reports one without (a warning)', () => {
    expect(check.check(checkedCrate(crateMetadata(), ['ro-crate-metadata.json', 'readme.rst']))).toEqual([]);
    const found = check.check(checkedCrate(crateMetadata(), ['ro-crate-metadata.json', 'test/README.md']));
    expect(found.map((f) => [f.type.id, f.type.severity, f.detail])).toEqual([
      ['best_practices.MissingReadme', 'warning', 'the crate has no README file at its root'],
    ]);
  });
});
