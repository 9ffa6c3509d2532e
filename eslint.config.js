import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/**
 * Feature folders of src/ that other code may import only through their `index.ts` (what the
 * feature exports). The shared folders (auth's decorators and user type, common, config,
 * database, metrics, health) are imported directly. Done with ESLint's own
 * `no-restricted-imports` rather than a plugin such as eslint-plugin-boundaries: a glob per
 * feature says it all, runs with no extra dependency, and keeps working across ESLint majors.
 * Each file gets exactly one block (ESLint would replace, not merge, the rule's options of
 * overlapping blocks). Specs are left out: they set up and inspect the tables they test.
 */
const FEATURES = [
  'crates',
  'workflows',
  'repositories',
  'test-monitoring',
  'orchestration',
  'notifications',
  'trs',
  'registries',
  'authorization-server',
  'managed-runs',
];

/**
 * Entries of a feature beside its index.ts: a runner process (src/runner.ts) takes managed-runs/
 * through runner/index.ts, which does not load the API's module and the registry with it.
 */
const SECOND_ENTRIES = {
  // gitignore rules: a file is re-included only after its folder is.
  'managed-runs': [
    '!**/managed-runs/runner/',
    '**/managed-runs/runner/*',
    '!**/managed-runs/runner/index.js',
  ],
};

function featureBoundary(guarded) {
  return {
    'no-restricted-imports': [
      'error',
      {
        patterns: guarded.map((feature) => ({
          group: [`**/${feature}/**`, `!**/${feature}/index.js`, ...(SECOND_ENTRIES[feature] ?? [])],
          message: `Import from ${feature}/ only through ${feature}/index.js (what the feature exports).`,
        })),
      },
    ],
  };
}

const boundaries = [
  ...FEATURES.map((feature) => ({
    files: [`src/${feature}/**/*.ts`],
    ignores: ['**/*.spec.ts'],
    rules: featureBoundary(FEATURES.filter((other) => other !== feature)),
  })),
  {
    files: ['src/**/*.ts'],
    ignores: ['**/*.spec.ts', ...FEATURES.map((feature) => `src/${feature}/**`)],
    rules: featureBoundary(FEATURES),
  },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      curly: ['error', 'all'],
    },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/explicit-module-boundary-types': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        fetch: 'readonly',
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
      },
    },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      '@typescript-eslint/explicit-module-boundary-types': 'off',
    },
  },
  ...boundaries,
  prettier,
);
