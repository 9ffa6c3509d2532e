import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import unzipper from 'unzipper';
import { DomainError } from '../common/errors/domain-error.js';
import { buildZip, writeZip, type ZipEntrySpec } from '../../test/support/zip-builder.js';
import { CrateReader, IN_MEMORY_ARCHIVE_BYTES } from './crate-reader.js';
import { parseRoCrate } from './ro-crate-parser.js';
import { WITH_SERVICES } from '../../test/support/crate-services.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/crates/', import.meta.url));
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

const METADATA = JSON.stringify({
  '@context': 'https://w3id.org/ro/crate/1.1/context',
  '@graph': [
    { '@id': 'ro-crate-metadata.json', '@type': 'CreativeWork', about: { '@id': './' } },
    { '@id': './', '@type': 'Dataset', name: 'built' },
  ],
});

let dir: string;
let counter = 0;
const reader = new CrateReader();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crate-reader-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function zipPath(): string {
  counter += 1;
  return join(dir, `archive-${counter}.zip`);
}

async function zipOf(entries: ZipEntrySpec[], truncateAt?: number): Promise<string> {
  return writeZip(zipPath(), entries, { truncateAt });
}

async function expectInvalid(work: Promise<unknown>, detail: RegExp): Promise<void> {
  await expect(work).rejects.toBeInstanceOf(DomainError);
  await expect(work).rejects.toMatchObject({ kind: 'invalid_input' });
  await expect(work).rejects.toThrow(detail);
}

/** Descriptors this process holds on a file, to prove the reader closes what it opened. */
function openDescriptorsOn(path: string): number {
  if (!existsSync('/proc/self/fd')) {
    return 0;
  }
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  }).length;
}

describe('CrateReader with the real example crates', () => {
  it('reads lifemonitor-example-wf-crate.zip', async () => {
    const contents = await reader.read(join(FIXTURES, 'lifemonitor-example-wf-crate.zip'), GiB);
    expect(contents).toMatchObject({
      metadataPath: 'ro-crate-metadata.json',
      entryCount: 9,
      declaredBytes: 18937,
    });
    const crate = parseRoCrate(contents.metadata, WITH_SERVICES);
    expect(crate.name).toBe('galaxy-workflow-example-with-tests');
    expect(crate.mainWorkflow).toEqual({
      id: 'sort-and-change-case.ga',
      name: 'sort-and-change-case',
      types: ['File', 'SoftwareSourceCode', 'ComputationalWorkflow'],
      programmingLanguage: { id: '#galaxy', name: 'Galaxy' },
    });
    expect(crate.suites).toEqual([
      {
        id: '#test1',
        name: 'test1',
        definition: {
          path: 'test/test1/sort-and-change-case-test.yml',
          engineType: 'planemo',
          engineVersion: '>=0.70',
        },
        instances: [
          {
            id: '#test1_1',
            name: 'test1_1',
            serviceType: 'travis',
            serviceUrl: 'https://api.travis-ci.org',
            resource: 'repo/1002447',
          },
        ],
      },
    ]);
  });

  it('reads ro-crate-galaxy-sortchangecase.crate.zip', async () => {
    const contents = await reader.read(join(FIXTURES, 'ro-crate-galaxy-sortchangecase.crate.zip'), GiB);
    const crate = parseRoCrate(contents.metadata, WITH_SERVICES);
    expect(crate.name).toBe('galaxy-workflow-example-with-tests');
    expect(crate.mainWorkflow?.id).toBe('sort-and-change-case.ga');
    expect(crate.suites).toHaveLength(1);
    expect(crate.suites[0].instances).toEqual([
      {
        id: '#test1_1',
        name: 'test1_1',
        serviceType: 'travis',
        serviceUrl: 'https://api.travis-ci.org',
        resource: 'repo/1002447',
      },
    ]);
    expect(crate.suites[0].definition).toEqual({
      path: 'test/test1/sort-and-change-case-test.yml',
      engineType: 'planemo',
      engineVersion: '>=0.70',
    });
  });

  it('reads ro-crate-cwl-basefreqsum.crate.zip: two suites without instances', async () => {
    const contents = await reader.read(join(FIXTURES, 'ro-crate-cwl-basefreqsum.crate.zip'), GiB);
    expect(contents.entryCount).toBe(19);
    const crate = parseRoCrate(contents.metadata, WITH_SERVICES);
    expect(crate.name).toBe('basefreqsum');
    expect(crate.mainWorkflow).toMatchObject({
      id: 'workflows/base_freq_sum.cwl',
      name: 'basefreqsum',
      programmingLanguage: { id: '#cwl', name: 'Common Workflow Language' },
    });
    expect(crate.suites).toEqual([
      {
        id: '#test1',
        name: 'test1',
        definition: {
          path: 'test/test1/base_freq_sum_tests.yml',
          engineType: 'planemo',
          engineVersion: '>=0.70',
        },
        instances: [],
      },
      {
        id: '#test2',
        name: 'test2',
        definition: {
          path: 'test/test2/base_freq_sum_tests.yml',
          engineType: 'planemo',
          engineVersion: '>=0.70',
        },
        instances: [],
      },
    ]);
  });

  it('reads test-galaxy-wf-repo.crate.zip: a definition without a suite', async () => {
    const contents = await reader.read(join(FIXTURES, 'test-galaxy-wf-repo.crate.zip'), GiB);
    const crate = parseRoCrate(contents.metadata, WITH_SERVICES);
    expect(crate.name).toBe('test-galaxy-wf-repo');
    expect(crate.mainWorkflow).toMatchObject({
      id: 'dummy.ga',
      name: 'test-galaxy-wf-repo',
      programmingLanguage: { id: 'https://w3id.org/workflowhub/workflow-ro-crate#galaxy', name: 'Galaxy' },
    });
    expect(crate.suites).toEqual([]);
  });
});

describe('CrateReader', () => {
  it('finds the metadata under one top-level folder', async () => {
    const path = await zipOf([
      { name: 'crate-1.0/' },
      { name: 'crate-1.0/ro-crate-metadata.json', data: METADATA },
      { name: 'crate-1.0/workflow.ga', data: '{}' },
      { name: '__MACOSX/crate-1.0/._workflow.ga', data: 'junk' },
    ]);
    const contents = await reader.read(path, GiB);
    expect(contents.metadataPath).toBe('crate-1.0/ro-crate-metadata.json');
    expect(parseRoCrate(contents.metadata, WITH_SERVICES).name).toBe('built');
    // Its files by their paths in the crate (for the repository checks), the folders left out.
    expect(contents.files).toEqual(['ro-crate-metadata.json', 'workflow.ga']);
  });

  it('lists the files of a crate at the top of the archive', async () => {
    const path = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name: 'test/' },
      { name: 'test/planemo.yml', data: '- doc: x' },
      { name: 'README.md', data: '# x' },
    ]);
    const { files } = await reader.read(path, GiB);
    expect([...files].sort()).toEqual(['README.md', 'ro-crate-metadata.json', 'test/planemo.yml']);
  });

  it('reads the first companion file asked for beside the metadata, and says why when it cannot', async () => {
    const companions = { names: ['.lifemonitor.yaml', 'lifemonitor.yaml'], maxBytes: 64 };
    const path = await zipOf([
      { name: 'octo-repo-abc1234/' },
      { name: 'octo-repo-abc1234/ro-crate-metadata.json', data: METADATA },
      { name: 'octo-repo-abc1234/lifemonitor.yaml', data: 'public: true\n' },
      { name: 'octo-repo-abc1234/sub/.lifemonitor.yaml', data: 'not this one' },
    ]);
    const read = await reader.read(path, GiB, undefined, companions);
    expect(read.companion?.name).toBe('lifemonitor.yaml');
    expect(read.companion?.bytes?.toString('utf8')).toBe('public: true\n');
    await expect(reader.read(path, GiB)).resolves.not.toHaveProperty('companion');
    const none = await zipOf([{ name: 'ro-crate-metadata.json', data: METADATA }]);
    await expect(reader.read(none, GiB, undefined, companions)).resolves.not.toHaveProperty('companion');
    const large = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name: '.lifemonitor.yaml', data: `# ${'x'.repeat(100)}` },
    ]);
    // Its own problem, not the crate's.
    await expect(reader.read(large, GiB, undefined, companions)).resolves.toMatchObject({
      metadata: JSON.parse(METADATA),
      companion: { name: '.lifemonitor.yaml', problem: '.lifemonitor.yaml is larger than 64 bytes' },
    });
  });

  it('prefers the metadata at the top of the archive', async () => {
    const path = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name: 'nested/ro-crate-metadata.json', data: 'not this one' },
    ]);
    await expect(reader.read(path, GiB)).resolves.toMatchObject({ metadataPath: 'ro-crate-metadata.json' });
  });

  it('reads stored (uncompressed) entries and a metadata file with a byte-order mark', async () => {
    const path = await zipOf([
      { name: 'ro-crate-metadata.json', data: `\uFEFF${METADATA}`, method: 'store' },
    ]);
    await expect(reader.read(path, GiB)).resolves.toMatchObject({ metadata: JSON.parse(METADATA) });
  });

  it('refuses a crate without ro-crate-metadata.json', async () => {
    await expectInvalid(
      reader.read(await zipOf([{ name: 'README.md', data: 'hi' }]), GiB),
      /^the crate has no ro-crate-metadata.json$/,
    );
  });

  it('refuses a metadata file under one of several top-level folders, or deeper', async () => {
    const several = await zipOf([
      { name: 'a/ro-crate-metadata.json', data: METADATA },
      { name: 'b/README.md', data: 'hi' },
    ]);
    await expectInvalid(reader.read(several, GiB), /^the crate has no ro-crate-metadata.json$/);
    const deeper = await zipOf([{ name: 'a/b/ro-crate-metadata.json', data: METADATA }]);
    await expectInvalid(reader.read(deeper, GiB), /^the crate has no ro-crate-metadata.json$/);
  });

  it('refuses an empty archive', async () => {
    await expectInvalid(reader.read(await zipOf([]), GiB), /^the crate has no ro-crate-metadata.json$/);
  });

  it('refuses metadata that is not JSON', async () => {
    const path = await zipOf([{ name: 'ro-crate-metadata.json', data: '{"@graph": [' }]);
    await expectInvalid(reader.read(path, GiB), /^ro-crate-metadata.json is not valid JSON$/);
  });

  it('refuses a file that is not a zip', async () => {
    const text = join(dir, 'not-a-zip.zip');
    await writeFile(text, '<html>Not found</html>');
    await expectInvalid(reader.read(text, GiB), /^the archive is not a zip file$/);
    const empty = join(dir, 'empty.zip');
    await writeFile(empty, '');
    await expectInvalid(reader.read(empty, GiB), /^the archive is not a zip file$/);
  });

  it('refuses a truncated archive', async () => {
    const whole = await readFile(join(FIXTURES, 'lifemonitor-example-wf-crate.zip'));
    const half = join(dir, 'half.zip');
    await writeFile(half, whole.subarray(0, whole.length / 2));
    await expectInvalid(reader.read(half, GiB), /^the archive is truncated or damaged/);
    const cutInDirectory = await zipOf([{ name: 'ro-crate-metadata.json', data: METADATA }], 200);
    await expectInvalid(reader.read(cutInDirectory, GiB), /^the archive is truncated or damaged/);
  });

  it('refuses an archive whose directory claims more entries than it can hold, without walking them', async () => {
    const claims = buildZip([]);
    claims.writeUInt16LE(60000, 8);
    claims.writeUInt16LE(60000, 10);
    const small = join(dir, 'claims.zip');
    await writeFile(small, claims);
    await expectInvalid(
      reader.read(small, GiB),
      /^the archive is truncated or damaged \(its directory claims 60000 entries\)$/,
    );

    // A zip64 end record may claim up to 2^64 entries; unzipper would try to walk them all.
    const record = Buffer.alloc(56);
    record.writeUInt32LE(0x06064b50, 0);
    record.writeBigUInt64LE(44n, 4);
    record.writeBigUInt64LE(2n ** 31n, 24);
    record.writeBigUInt64LE(2n ** 31n, 32);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(4n, 8);
    locator.writeUInt32LE(1, 16);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(0xffff, 8);
    end.writeUInt16LE(0xffff, 10);
    end.writeUInt32LE(0xffffffff, 16);
    const zip64 = join(dir, 'zip64-claims.zip');
    await writeFile(zip64, Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), record, locator, end]));
    await expectInvalid(
      reader.read(zip64, GiB),
      /^the archive is truncated or damaged \(its directory claims 2147483648 entries\)$/,
    );
  });

  it('fails cleanly, never hanging, on every truncation of a real crate', async () => {
    const whole = await readFile(join(FIXTURES, 'test-galaxy-wf-repo.crate.zip'));
    const path = join(dir, 'cut.zip');
    for (let cut = 4; cut < whole.length; cut += Math.ceil(whole.length / 40)) {
      await writeFile(path, whole.subarray(0, cut));
      await expect(reader.read(path, GiB)).rejects.toBeInstanceOf(DomainError);
    }
  });

  it('answers with a domain error or a result, never anything else, for damaged bytes', async () => {
    const whole = await readFile(join(FIXTURES, 'lifemonitor-example-wf-crate.zip'));
    const path = join(dir, 'flipped.zip');
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 60; round++) {
      const copy = Buffer.from(whole);
      // Damage lands where it matters most: the central directory, the metadata entry and their headers.
      const from = round % 2 === 0 ? whole.length - 700 : 0;
      for (let flips = 0; flips < 3; flips++) {
        const at = 4 + Math.floor(from + random() * (whole.length - from - 4));
        copy[at] = Math.floor(random() * 256);
      }
      await writeFile(path, copy);
      await reader.read(path, GiB).catch((error: unknown) => {
        expect(error).toBeInstanceOf(DomainError);
      });
    }
  });

  it.each([
    ['../evil.sh'],
    ['crate/../../evil.sh'],
    ['/etc/cron.d/evil'],
    ['C:\\Windows\\evil.dll'],
    ['crate\\..\\..\\evil.sh'],
  ])('refuses the unsafe entry name %s', async (name) => {
    const path = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name, data: 'x' },
    ]);
    await expectInvalid(
      reader.read(path, GiB),
      new RegExp(
        `^the archive has an unsafe entry name: ${JSON.stringify(name).replace(/[\\.^$*+?()[\]{}|]/g, '\\$&')}$`,
      ),
    );
  });

  it('accepts names that only look like traversal', async () => {
    const path = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name: 'data/file..txt', data: 'x' },
      { name: '..hidden/readme', data: 'x' },
    ]);
    await expect(reader.read(path, GiB)).resolves.toMatchObject({ entryCount: 3 });
  });

  it('refuses an archive whose declared sizes add up past the limit', async () => {
    const path = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name: 'big-1.bin', data: 'x', declaredSize: 600 * 1024 },
      { name: 'big-2.bin', data: 'x', declaredSize: 600 * 1024 },
    ]);
    await expectInvalid(reader.read(path, MiB), /^the archive expands to more than 1 MiB$/);
    const huge = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name: 'huge.bin', data: 'x', declaredSize: 0xfffffff0 },
    ]);
    await expectInvalid(reader.read(huge, GiB), /^the archive expands to more than 1 GiB$/);
  });

  it('stops inflating a metadata file that lies about its size (a zip bomb)', async () => {
    const bomb = `{"padding": "${'0'.repeat(20 * MiB)}"}`;
    const path = await zipOf([{ name: 'ro-crate-metadata.json', data: bomb, declaredSize: 100 }]);
    await expectInvalid(reader.read(path, MiB), /^the archive expands to more than 1 MiB$/);
    expect(openDescriptorsOn(path)).toBe(0);
  });

  it('closes the archive when it stops reading early', async () => {
    // Incompressible bytes, so that most of the entry is still unread on disk when reading stops.
    const noise = `{"padding": "${randomBytes(3 * MiB).toString('base64')}"}`;
    const path = await zipOf([{ name: 'ro-crate-metadata.json', data: noise, declaredSize: 100 }]);
    await expectInvalid(reader.read(path, MiB), /^the archive expands to more than 1 MiB$/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(openDescriptorsOn(path)).toBe(0);
  });

  it('reads a small archive from memory and a large one in place, alike', async () => {
    const results = [];
    for (const padding of [100 * 1024, IN_MEMORY_ARCHIVE_BYTES + 1]) {
      const path = await zipOf([
        { name: 'ro-crate-metadata.json', data: METADATA },
        { name: 'data/pad.bin', data: randomBytes(padding), method: 'store' },
      ]);
      results.push(await reader.read(path, GiB));
      expect(openDescriptorsOn(path)).toBe(0);
    }
    expect(results[0]).toEqual({ ...results[1], declaredBytes: expect.any(Number) });
    expect(results[1]).toMatchObject({ metadataPath: 'ro-crate-metadata.json', entryCount: 2 });
  });

  it('counts the other entries in the budget of the metadata', async () => {
    const path = await zipOf([
      { name: 'other.bin', data: 'x', declaredSize: MiB - 1000 },
      { name: 'ro-crate-metadata.json', data: `${METADATA}${' '.repeat(5000)}`, declaredSize: 10 },
    ]);
    await expectInvalid(reader.read(path, MiB), /^the archive expands to more than 1 MiB$/);
  });

  it('never inflates entries other than the metadata', async () => {
    const path = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name: 'lying.bin', data: Buffer.alloc(5 * MiB), declaredSize: 10 },
    ]);
    await expect(reader.read(path, MiB)).resolves.toMatchObject({ entryCount: 2 });
  });

  it('bounds the metadata file on its own', async () => {
    const path = await zipOf([{ name: 'ro-crate-metadata.json', data: `${METADATA}${' '.repeat(3000)}` }]);
    await expectInvalid(reader.read(path, GiB, 2048), /^ro-crate-metadata.json is larger than 2 KiB$/);
  });

  it('refuses a metadata file whose bytes fail the CRC check', async () => {
    const path = await zipOf([{ name: 'ro-crate-metadata.json', data: METADATA, crc: 12345 }]);
    await expectInvalid(
      reader.read(path, GiB),
      /^the archive is damaged \(ro-crate-metadata.json fails its CRC check\)$/,
    );
  });

  it('reads a fixture copied under another name, leaving no descriptor open', async () => {
    const path = zipPath();
    await copyFile(join(FIXTURES, 'ro-crate-cwl-basefreqsum.crate.zip'), path);
    await reader.read(path, GiB);
    expect(openDescriptorsOn(path)).toBe(0);
  });

  it('builds archives that unzip tools accept', async () => {
    // Keeps the hand-written zip builder honest: a broken builder would make the tests above meaningless.
    const path = zipPath();
    await writeFile(
      path,
      buildZip([
        { name: 'a/' },
        { name: 'a/b.txt', data: 'hello' },
        { name: 'c.txt', data: '', method: 'store' },
      ]),
    );
    if (existsSync('/usr/bin/unzip')) {
      expect(() => execFileSync('/usr/bin/unzip', ['-tq', path], { stdio: 'pipe' })).not.toThrow();
    }
    const directory = await unzipper.Open.file(path);
    expect(directory.files.map((file) => file.path)).toEqual(['a/', 'a/b.txt', 'c.txt']);
    await expect(directory.files[1].buffer()).resolves.toEqual(Buffer.from('hello'));
  });
});

describe('CrateReader.files', () => {
  const text = async (file: { open(): Promise<NodeJS.ReadableStream> }): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of await file.open()) {
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  };

  it("lists the crate's files by their paths under its root, and gives their bytes", async () => {
    const path = await zipOf([
      { name: 'crate/' },
      { name: 'crate/ro-crate-metadata.json', data: METADATA },
      { name: 'crate/tools/say.cwl', data: 'class: CommandLineTool\n' },
      { name: 'crate/tools/big.txt', data: 'x'.repeat(2 * MiB), method: 'store' },
      { name: '__MACOSX/crate/._say.cwl', data: 'resource fork' },
    ]);
    const files = await reader.files(path, GiB);
    expect(files.map((file) => [file.path, file.size])).toEqual([
      ['ro-crate-metadata.json', METADATA.length],
      ['tools/say.cwl', 23],
      ['tools/big.txt', 2 * MiB],
    ]);
    await expect(text(files[1])).resolves.toBe('class: CommandLineTool\n');
    await expect(text(files[2])).resolves.toHaveLength(2 * MiB);
    // Closing a file descriptor takes a turn of the thread pool: look again a few times.
    for (let turn = 0; turn < 100 && openDescriptorsOn(path) > 0; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(openDescriptorsOn(path)).toBe(0);
  });

  it('fails the stream of a file whose bytes are more than it declares, or fail their CRC check', async () => {
    // Larger than IN_MEMORY_ARCHIVE_BYTES: read in place, where a reader stopping early leaves streams open.
    const path = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name: 'bomb.txt', data: 'y'.repeat(256 * 1024), declaredSize: 16 },
      { name: 'damaged.txt', data: 'hello', crc: 12345 },
      { name: 'padding.bin', data: randomBytes(IN_MEMORY_ARCHIVE_BYTES), method: 'store' },
    ]);
    const [, bomb, damaged] = await reader.files(path, GiB);
    await expectInvalid(text(bomb), /^bomb.txt expands past its declared size$/);
    await expectInvalid(
      text(damaged),
      /^the archive is damaged \(damaged.txt fails its size or CRC check\)$/,
    );
    for (let turn = 0; turn < 100 && openDescriptorsOn(path) > 0; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(openDescriptorsOn(path)).toBe(0);
  });

  it('checks the archive as read does', async () => {
    const path = await zipOf([
      { name: 'ro-crate-metadata.json', data: METADATA },
      { name: 'big.txt', data: 'z'.repeat(4096) },
    ]);
    await expectInvalid(reader.files(path, 1024), /^the archive expands to more than 1 KiB$/);
  });
});
