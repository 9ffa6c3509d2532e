import { createHash } from 'node:crypto';
import { CompareFail, compareCwl, type OutputFiles } from './cwltest-compare.js';

/**
 * cwltest's comparison rules (common-workflow-language/cwltest, src/cwltest/compare.py and
 * tests/test_compare.py, Apache-2.0, read at commit 14c59dea3d9ad597bf0aaea158fdfa41a469bdcc):
 * each case names the rule or the cwltest test it follows. The cases are written here, not copied.
 */

/**
 * A run's working folder in memory, as the engine's confined view of it answers: a path it does
 * not hold (outside the folder, or absent) is neither a file nor a folder, has no checksum and a
 * size of -1.
 */
class FolderFiles implements OutputFiles {
  readonly read: string[] = [];

  constructor(
    private readonly files: Record<string, string>,
    private readonly folders: readonly string[] = [],
  ) {}

  isFile(path: string): Promise<boolean> {
    return Promise.resolve(path in this.files);
  }

  isDirectory(path: string): Promise<boolean> {
    return Promise.resolve(this.folders.includes(path));
  }

  text(path: string): Promise<string | undefined> {
    this.read.push(path);
    return Promise.resolve(this.files[path]);
  }

  size(path: string): Promise<number> {
    return Promise.resolve(path in this.files ? Buffer.byteLength(this.files[path]) : -1);
  }

  sha1(path: string): Promise<string> {
    this.read.push(path);
    return Promise.resolve(
      path in this.files ? `sha1$${createHash('sha1').update(this.files[path]).digest('hex')}` : '',
    );
  }
}

const OUT = '/run/out';
const HELLO = 'hello\n';
/** sha1 of "hello\n". */
const HELLO_SHA1 = 'sha1$f572d396fae9206628714fb2ce00f72e94f2258f';
const OTHER_SHA1 = 'sha1$0000000000000000000000000000000000000000';

/** The output object cwltool writes for `/run/out/hello.txt`. */
function helloFile(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    class: 'File',
    location: `file://${OUT}/hello.txt`,
    path: `${OUT}/hello.txt`,
    basename: 'hello.txt',
    nameroot: 'hello',
    nameext: '.txt',
    checksum: HELLO_SHA1,
    size: 6,
    ...overrides,
  };
}

const files = (): FolderFiles =>
  new FolderFiles(
    {
      [`${OUT}/hello.txt`]: HELLO,
      [`${OUT}/results/a.txt`]: 'a\n',
      [`${OUT}/results/b.txt`]: 'b\n',
    },
    [`${OUT}/results`],
  );

const results = (listing: unknown[] = []): Record<string, unknown> => ({
  class: 'Directory',
  location: `file://${OUT}/results/`,
  basename: 'results',
  listing: [
    { class: 'File', location: `file://${OUT}/results/a.txt`, basename: 'a.txt', size: 2 },
    { class: 'File', location: `file://${OUT}/results/b.txt`, basename: 'b.txt', size: 2 },
    ...listing,
  ],
});

describe('compareCwl: what cwltest lets pass', () => {
  it.each<[string, unknown, unknown]>([
    // compare(): `expected == "Any"` returns first (test_compare_any_success).
    ['"Any" against any value', { out: 'Any' }, { out: { class: 'File', location: 'file:///x' } }],
    ['"Any" against a missing value', { out: 'Any' }, {}],
    ['equal scalars, 1 and 1.0 alike', { n: 1, s: 'x', b: true }, { n: 1.0, s: 'x', b: true }],
    // An expected null against a missing key: `expected is not None` guards the missing-value failure.
    ['an expected null against a missing key', { out: null }, {}],
    // _compare_dict: an extra actual key passes when it is None.
    ['an extra key that is null', { out: 'x' }, { out: 'x', log: null }],
    // _compare_location: the actual location ends with "/" + the expected one (test_compare_file).
    [
      'a File by location, checksum, size and basename',
      { out: { class: 'File', location: 'hello.txt', checksum: HELLO_SHA1, size: 6, basename: 'hello.txt' } },
      { out: helloFile() },
    ],
    ['a File whose location is "Any"', { out: { class: 'File', location: 'Any' } }, { out: helloFile() }],
    // _compare_location: an expected `path` is compared with the actual path.
    ['a File by path', { out: { class: 'File', path: 'hello.txt' } }, { out: helloFile() }],
    // _compare_contents (test_compare_contents_success).
    ['a File by contents', { out: { class: 'File', contents: HELLO } }, { out: helloFile() }],
    // Lists compare item by item; objects key by key, however deep (test_compare_list_success).
    [
      'nested lists and objects of Files',
      {
        runs: [
          { name: 'one', files: [{ class: 'File', checksum: HELLO_SHA1 }] },
          { name: 'two', files: [] },
        ],
      },
      {
        runs: [
          { name: 'one', files: [helloFile()] },
          { name: 'two', files: [] },
        ],
      },
    ],
    // _compare_directory: each expected listing entry matches some actual one, in any order
    // (test_compare_directory_success); a trailing "/" of the actual location is dropped.
    [
      'a Directory whose expected listing is part of the actual one, in another order',
      {
        dir: {
          class: 'Directory',
          location: 'results',
          listing: [
            { class: 'File', location: 'b.txt', contents: 'b\n' },
            { class: 'File', location: 'a.txt', size: 2 },
          ],
        },
      },
      { dir: results() },
    ],
    // test_compare_directory_path: the actual Directory named by `path` alone.
    [
      'a Directory named by its path',
      { dir: { class: 'Directory', location: 'results', listing: [] } },
      { dir: { class: 'Directory', path: `${OUT}/results`, listing: [] } },
    ],
  ])('%s', async (_case, expected, actual) => {
    await expect(compareCwl(expected, actual, files())).resolves.toBeUndefined();
  });
});

describe('compareCwl: what cwltest fails', () => {
  it.each<[string, unknown, unknown, string | RegExp]>([
    // compare(): an expected value against None.
    ['an expected key the output lacks', { out: 'x' }, {}, "failed comparison for key 'out'"],
    ['an expected File the output lacks', { out: { class: 'File' } }, { out: null }, "key 'out'"],
    // _compare_dict: an extra actual key that is not None.
    ['an extra key with a value', { out: 'x' }, { out: 'x', log: 'y' }, "unexpected key 'log'"],
    ['unequal scalars', { n: 1 }, { n: 2 }, "key 'n'"],
    ['a number against its text', { n: 1 }, { n: '1' }, "key 'n'"],
    ['an object against a scalar', { out: { a: 1 } }, { out: 'a' }, "key 'out'"],
    // Lists: not a list, another length, another order (test_compare_list_failure_*).
    ['a list against an object', { xs: [1] }, { xs: { 0: 1 } }, "key 'xs'"],
    ['lists of other lengths', { xs: [1, 2] }, { xs: [1, 2, 3] }, "lengths don't match"],
    ['lists in another order', { xs: ['a', 'b'] }, { xs: ['b', 'a'] }, 'item 0'],
    // _compare_checksum / _compare_size, against the file on disk (test_compare_file_different_*).
    [
      'another checksum than the expected one',
      { out: { class: 'File', checksum: OTHER_SHA1 } },
      { out: helloFile() },
      `checksum ${HELLO_SHA1} is not the expected one`,
    ],
    [
      'another size than the expected one',
      { out: { class: 'File', size: 7 } },
      { out: helloFile() },
      'size 6 is not the expected one',
    ],
    // The output object's own claims are checked against the disk (test_compare_file_inconsistent_*).
    [
      'an output object whose checksum is not its file’s',
      { out: { class: 'File' } },
      { out: helloFile({ checksum: OTHER_SHA1 }) },
      "is not the output object's",
    ],
    [
      'an output object whose size is not its file’s',
      { out: { class: 'File' } },
      { out: helloFile({ size: 60 }) },
      "size on disk 6 is not the output object's",
    ],
    // Any other expected key compares as a value (test_compare_file_failure_different).
    [
      'another basename',
      { out: { class: 'File', basename: 'hi.txt' } },
      { out: helloFile() },
      "field 'basename'",
    ],
    // _compare_location: the end of the location must be "/" + the expected one, not any suffix.
    [
      'a location that ends with the expected name but not at a "/"',
      { out: { class: 'File', location: 'lo.txt' } },
      { out: helloFile() },
      'does not end with lo.txt',
    ],
    // _compare_location: the file must exist, even for `location: Any` (test_compare_contents_not_exist).
    [
      'a location "Any" naming no file',
      { out: { class: 'File', location: 'Any' } },
      { out: helloFile({ path: `${OUT}/gone.txt`, location: `file://${OUT}/gone.txt` }) },
      'gone.txt does not exist',
    ],
    [
      'a File named by a URI that is not a local file',
      { out: { class: 'File', location: 'hello.txt' } },
      { out: helloFile({ path: undefined, location: 'https://elsewhere.example/hello.txt' }) },
      'does not exist',
    ],
    // _compare_contents (test_compare_contents_failure).
    [
      'other contents',
      { out: { class: 'File', contents: 'hello' } },
      { out: helloFile() },
      'Output file contents do not match',
    ],
    // _compare_directory (test_compare_directory_failure_*).
    [
      'a Directory whose actual listing lacks an expected entry',
      { dir: { class: 'Directory', listing: [{ class: 'File', location: 'c.txt' }] } },
      { dir: results() },
      'not found',
    ],
    [
      'a Directory without a listing',
      { dir: { class: 'Directory', listing: [] } },
      { dir: { class: 'Directory', location: `file://${OUT}/results` } },
      "'listing' is mandatory",
    ],
    [
      'a File where a Directory is expected',
      { dir: { class: 'Directory', listing: [] } },
      { dir: helloFile() },
      "expected object with a class 'Directory'",
    ],
    [
      'a Directory location that is a file',
      { dir: { class: 'Directory', location: 'hello.txt', listing: [] } },
      { dir: { class: 'Directory', location: `file://${OUT}/hello.txt`, listing: [] } },
      'does not exist',
    ],
  ])('%s', async (_case, expected, actual, message) => {
    const compared = compareCwl(expected, actual, files());
    await expect(compared).rejects.toBeInstanceOf(CompareFail);
    await expect(compared).rejects.toThrow(message);
  });

  it('says where in the output the difference is, and both sides', async () => {
    const compared = compareCwl(
      { runs: [{ out: { class: 'File', checksum: OTHER_SHA1 } }] },
      { runs: [{ out: helloFile() }] },
      files(),
    );
    await expect(compared).rejects.toThrow(
      /failed comparison for key 'runs'[\s\S]*item 0[\s\S]*key 'out'[\s\S]*is not the expected one/,
    );
    await expect(compared).rejects.toThrow(`"checksum": "${OTHER_SHA1}"`);
  });

  it('reads no file the run’s folder does not hold', async () => {
    const folder = files();
    const compared = compareCwl(
      { out: { class: 'File', location: 'Any', contents: 'root:x:0:0' } },
      { out: { class: 'File', path: '/etc/passwd', location: 'file:///etc/passwd' } },
      folder,
    );
    await expect(compared).rejects.toThrow('/etc/passwd does not exist');
    expect(folder.read).toEqual([]);
  });
});
