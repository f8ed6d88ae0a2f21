// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'tools/neo4j/target/', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/require-await': 'off',
      'eslint-comments/no-unused-disable': 'off',
      eqeqeq: ['error', 'always'],
      'no-console': 'error',
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    // The layers point one way: the HTTP edge (src/http) calls into the domain, never the other
    // way round. Only the entry point, which composes the two, imports from it.
    files: ['src/**/*.ts'],
    ignores: ['src/http/**', 'src/main.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)http(/|$)',
              message: 'src/http is the outermost layer: move what you need out of it instead.',
            },
          ],
        },
      ],
    },
  },
  {
    // A vocabulary (src/vocabulary) is a leaf: the schemas and the domain both import it, so it
    // imports nothing else.
    files: ['src/vocabulary/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./',
              message: 'a vocabulary is a leaf: keep what it needs in src/vocabulary.',
            },
          ],
        },
      ],
    },
  },
  {
    // The schemas stand on the vocabularies and a few leaf modules, never on a feature folder:
    // the features import the schemas' types, so the other way round would make a cycle.
    files: ['src/schemas/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!vocabulary/|errors/errors\\.js$|ids\\.js$|pagination\\.js$|time\\.js$)',
              message:
                'schemas import only src/vocabulary and leaf modules: move the word to src/vocabulary.',
            },
          ],
        },
      ],
    },
  },
  {
    // The operator table stands below both policy conditions and principal search, which import
    // it: it may import only the vocabularies and leaf modules, never a feature folder.
    files: ['src/operators/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!vocabulary/|time\\.js$)',
              message: 'the operator table imports only src/vocabulary and leaf modules.',
            },
          ],
        },
      ],
    },
  },
  {
    // Cypher is run through the database layer only.
    files: ['src/http/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)(db/database|db/catalogue|neo4j-driver)(\\.js)?$',
              message: 'routes call services; only services and repositories talk to the database.',
            },
          ],
        },
      ],
    },
  },
  {
    // bin/ holds the JavaScript launchers of the command line, outside every tsconfig: they are
    // linted without type information.
    files: ['bin/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests and benchmarks read JSON responses whose shape the assertions themselves check.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unused-expressions': 'off',
      'no-console': 'off',
    },
  },
  prettier,
);
