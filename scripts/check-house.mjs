#!/usr/bin/env node
// The house's two standing rules, checked over src/ (specs aside): no source file past 600 lines,
// and no import circle, type-only imports included (a circle of types is still two files that
// cannot be understood, moved or changed one without the other). Prints each breach, exits 1 on
// any. `.ci/run` runs it beside the lint.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const MAX_LINES = 600;

/** Every relative module a file imports or re-exports, statically or with import(). */
const IMPORT =
  /(?:\bimport\s*(?:type\s+)?(?:[\w*{}\s,]+?\s+from\s+)?|\bexport\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(root) {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

/** The .ts file a relative specifier names (`./x.js` is `./x.ts` in the sources). */
function resolveImport(from, specifier) {
  const target = resolve(dirname(from), specifier.replace(/\.js$/, '.ts'));
  if (existsSync(target) && statSync(target).isFile()) {
    return target;
  }
  const index = join(resolve(dirname(from), specifier), 'index.ts');
  return existsSync(index) ? index : undefined;
}

export function importGraph(files) {
  const graph = new Map();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = new Set();
    for (const match of text.matchAll(IMPORT)) {
      const target = resolveImport(file, match[1]);
      if (target && target !== file) {
        targets.add(target);
      }
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), each sorted. */
export function circles(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (start) => {
    // Iterative, so that a deep chain of imports cannot overflow the call stack.
    const work = [[start, 0]];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, next] = frame;
      const edges = graph.get(node) ?? [];
      if (next < edges.length) {
        frame[1] += 1;
        const target = edges[next];
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push([target, 0]);
        } else if (onStack.has(target)) {
          low.set(node, Math.min(low.get(node), index.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1) {
          found.push(component.sort());
        }
      }
    }
  };
  for (const node of graph.keys()) {
    if (!index.has(node)) {
      visit(node);
    }
  }
  return found;
}

export function longFiles(files) {
  return files
    .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = resolve(process.argv[2] ?? 'src');
  const files = sourceFiles(root);
  const show = (file) => relative(process.cwd(), file);
  const long = longFiles(files);
  const found = circles(importGraph(files));
  for (const { file, lines } of long) {
    process.stdout.write(`${show(file)}: ${lines} lines, past ${MAX_LINES}\n`);
  }
  for (const component of found) {
    process.stdout.write(`import circle: ${component.map(show).join(' -> ')}\n`);
  }
  process.stdout.write(
    `${files.length} source files: ${long.length} past ${MAX_LINES} lines, ${found.length} import circle(s)\n`,
  );
  process.exitCode = long.length > 0 || found.length > 0 ? 1 : 0;
}
