// Lint rules, including the import boundaries of docs/architecture (engine is pure; only
// kube/ and framework/ talk to the API server; only framework/ sees @dot-i/k8s-operator).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const clientNode = {
  name: '@kubernetes/client-node',
  message: 'Only src/kube/ and src/framework/ talk to the API server.',
};
const dotI = {
  name: '@dot-i/k8s-operator',
  message: 'Only src/framework/ may use @dot-i/k8s-operator.',
};
const nodeIo = [
  'fs',
  'http',
  'https',
  'net',
  'child_process',
  'os',
  'process',
  'fs/promises',
].flatMap((m) => [m, `node:${m}`]);
/** src/operator/ is the wiring that main.ts composes: nothing below it may reach back up. */
const operatorFolder = {
  group: ['**/operator/*'],
  message: 'Only main.ts (and tests, bench, tools) use src/operator/.',
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      '.cache/',
      '.local/',
      'coverage/',
      'charts/',
      // ajv's standalone output (npm run generate), checked by the tests of what calls it.
      'src/engine/crd-validators.generated.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/explicit-function-return-type': ['error', { allowExpressions: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      complexity: ['error', 15],
      'max-depth': ['error', 4],
      'max-params': ['error', 5],
      'no-restricted-imports': ['error', { paths: [clientNode, dotI] }],
    },
  },
  {
    files: ['src/engine/**/*.ts', 'src/api/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [clientNode, dotI],
          patterns: [
            { group: nodeIo, message: 'src/engine and src/api are pure: no I/O.' },
            {
              group: [
                '../kube/*',
                '../framework/*',
                '../reconcile/*',
                '../webhook/*',
                '../operator/*',
                '../cli*',
              ],
              message: 'The engine imports only api/ and pure libraries.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'fetch', 'setTimeout', 'setInterval'],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'The engine has no clock: pass time in.' },
        { object: 'process', property: 'env', message: 'The engine reads no environment.' },
      ],
    },
  },
  {
    files: ['src/kube/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [dotI], patterns: [operatorFolder] }] },
  },
  {
    // The framework may use client-node and dot-i; it knows nothing of what is built on it.
    files: ['src/framework/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/operator/*', '**/reconcile/*', '**/webhook/*', '**/kube/*'],
              message: 'The framework knows nothing of the operator, reconcilers or kube/.',
            },
          ],
        },
      ],
    },
  },
  {
    // The operator's wiring takes options from main.ts: it never reads flags or the environment.
    files: ['src/operator/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [clientNode, dotI],
          patterns: [
            {
              group: ['**/cli/*', '**/cli.ts', '**/config.ts', '**/main.ts', '**/http-servers.ts'],
              message: 'src/operator/ is composed by main.ts; it takes options, not config.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/reconcile/**/*.ts', 'src/webhook/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [clientNode, dotI],
          patterns: [
            {
              // The framework's contracts (reconciler.ts: Reconciler, Result, TerminalError;
              // dependency-key.ts) are allowed; its machinery (informer, work queue, shell,
              // source registry, leader election, controller) and all of kube/ are not.
              group: [
                '**/kube/*',
                '**/framework/*',
                '!**/framework/reconciler.ts',
                '!**/framework/dependency-key.ts',
              ],
              message: 'Reconcilers see ports and framework interfaces, never implementations.',
            },
            operatorFolder,
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'tools/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/require-await': 'off',
      complexity: 'off',
    },
  },
  {
    files: ['eslint.config.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
