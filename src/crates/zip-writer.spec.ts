import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import unzipper from 'unzipper';
import { CrateReader } from './crate-reader.js';
import { singleFileZip } from './zip-writer.js';

describe('singleFileZip', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'zip-writer-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('holds the one file with its bytes unchanged, readable by unzipper and the crate reader', async () => {
    const json = Buffer.from(
      '\uFEFF{"@context": "https://w3id.org/ro/crate/1.2/context", "@graph": []}\n',
      'utf8',
    );
    const path = join(folder, 'one.zip');
    await writeFile(path, singleFileZip('ro-crate-metadata.json', json));
    const directory = await unzipper.Open.file(path);
    expect(directory.files.map((file) => file.path)).toEqual(['ro-crate-metadata.json']);
    expect(await directory.files[0].buffer()).toEqual(json);
    const read = await new CrateReader().read(path, 1024 * 1024);
    expect(read).toMatchObject({ metadataPath: 'ro-crate-metadata.json', entryCount: 1 });
  });

  it('gives the same archive for the same bytes, and another for other bytes', () => {
    const a = singleFileZip('ro-crate-metadata.json', Buffer.from('{"a": 1}'));
    expect(singleFileZip('ro-crate-metadata.json', Buffer.from('{"a": 1}'))).toEqual(a);
    expect(singleFileZip('ro-crate-metadata.json', Buffer.from('{"a": 2}'))).not.toEqual(a);
  });
});
