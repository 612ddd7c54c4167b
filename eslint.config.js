import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      '**/node_modules/**',
      '**/gen/**',
      '.gen-deps/**',
      'docs-site/**',
      '**/dist/**',
      '**/build/**',
      '.run/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'test/helpers/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      // The Kubernetes models of @kubernetes/client-node are classes whose instances are plain
      // data; object literals are how every caller builds them.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      complexity: ['error', 10],
      'max-depth': ['error', 3],
      'max-params': ['error', 4],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
      ],
    },
  },
  {
    // Plain JavaScript (tool configuration, Jest plug-ins) is not type-checked.
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      '@typescript-eslint/explicit-module-boundary-types': 'off',
    },
  },
  {
    // Tool configuration and Jest plug-ins must export a default.
    files: ['*.config.js', 'test/helpers/*.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Tests read Kubernetes objects through optional chains, which the complexity rule counts.
    files: ['**/*.test.ts', '**/*.cases.ts'],
    // Table-driven tests take one parameter per column.
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', complexity: 'off', 'max-params': 'off' },
  },
  prettier,
);
