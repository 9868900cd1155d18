// Lint rules for the whole repository: typescript-eslint's strict type-checked set; formatting is
// prettier's job (`npm run lint` checks both).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '.quire/**', '**/*.mjs', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['vitest.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Numbers read fine in messages and SQL placeholders (`$${i + 1}`).
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // `(req, res) => res.end()` and `() => void promise` are idiomatic callbacks, not confusion.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true, ignoreVoidOperator: true }],
      // `_name` marks a value deliberately left unused (a destructured-away key, a required parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests read JSON response bodies as `any` and state what they expect with `!`: a wrong
    // assumption fails the test right there, which is the point of a test.
    files: ['tests/**', '**/test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // @kubernetes/client-node declares its models as classes, yet sends and receives plain JSON:
    // object literals are how its own examples build them.
    files: ['services/operator/**', 'tests/operator/**'],
    rules: {
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/no-misused-spread': 'off',
    },
  },
  prettier,
);
