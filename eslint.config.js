// Lint rules. The engine's purity beyond imports (no timers, no clock, no environment) is here;
// the import boundaries of docs/architecture.md are dependency-cruiser's (.dependency-cruiser.mjs),
// which matches folders at any depth and finds cycles.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
      'src/engine/crd-schema/crd-validators.generated.ts',
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
    },
  },
  {
    files: ['src/engine/**/*.ts', 'src/api/**/*.ts'],
    rules: {
      'no-restricted-globals': ['error', 'fetch', 'setTimeout', 'setInterval'],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'The engine has no clock: pass time in.' },
        { object: 'process', property: 'env', message: 'The engine reads no environment.' },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'tools/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/require-await': 'off',
      complexity: 'off',
    },
  },
  {
    files: ['eslint.config.js', '.dependency-cruiser.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
