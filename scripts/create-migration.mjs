#!/usr/bin/env node
// npm run migration:create -- add-widget-colour
// Writes migrations/<timestamp>-<name>.ts (QueryRunner Table API, so it runs on SQLite and
// MySQL/MariaDB) and appends it to the list in src/database/migrations.ts.
import { readFileSync, writeFileSync } from 'node:fs';

const name = process.argv[2];
if (!name || !/^[a-z][a-z0-9-]*$/.test(name)) {
  process.stderr.write('usage: npm run migration:create -- <kebab-case-name>\n');
  process.exit(2);
}
const stamp = Date.now();
const className = `${name.replace(/(^|-)([a-z0-9])/g, (_m, _d, c) => c.toUpperCase())}${stamp}`;
const file = `migrations/${stamp}-${name}.ts`;
writeFileSync(
  file,
  `import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Use the Table API (createTable, addColumn, createIndex …): the same file runs on SQLite and MySQL.
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Undo exactly what up() did.
  }
}
`,
);
const list = 'src/database/migrations.ts';
let source = readFileSync(list, 'utf8');
const imports = [...source.matchAll(/^import .*;$/gm)];
const last = imports[imports.length - 1];
source =
  source.slice(0, last.index + last[0].length) +
  `\nimport { ${className} } from '../../${file.replace(/\.ts$/, '.js')}';` +
  source.slice(last.index + last[0].length);
source = source.replace(/\n\];\s*$/, `\n  ${className},\n];\n`);
writeFileSync(list, source);
process.stdout.write(`created ${file} and listed it in ${list}\n`);
