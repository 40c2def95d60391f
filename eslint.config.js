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

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.cache/', '.local/', 'coverage/', 'charts/'] },
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
              group: ['../kube/*', '../framework/*', '../reconcile/*', '../webhook/*', '../cli*'],
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
    rules: { 'no-restricted-imports': ['error', { paths: [dotI] }] },
  },
  {
    files: ['src/framework/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
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
