// Builds the extension into out/ with esbuild: the extension host's bundle
// (out/extension.js, vscode-languageclient inside) and the dependency-graph
// webview's (out/webview/graph.js, Mermaid inside), so that the .vsix needs
// no node_modules and the webview fetches nothing at run time. Type checking
// is tsc's (`npm run typecheck`); esbuild only strips the types.
import * as esbuild from 'esbuild';
import fs from 'node:fs';

fs.rmSync('out', { recursive: true, force: true });

const common = { bundle: true, minify: true, logLevel: 'warning', legalComments: 'external' };

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'out/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  }),
  esbuild.build({
    ...common,
    entryPoints: ['src/webview/graph.ts'],
    outfile: 'out/webview/graph.js',
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
  }),
]);
// Mermaid's own licence beside the bundle (the LEGAL.txt files carry its
// dependencies' notices).
fs.copyFileSync('node_modules/mermaid/LICENSE', 'out/webview/mermaid.LICENSE');
// The .saga file schemas for VS Code's own JSON support (package.json's
// jsonValidation): copied from their one home, store/schema/schemas, which
// the server embeds, so the two never differ.
fs.mkdirSync('out/schemas', { recursive: true });
for (const kind of ['epic', 'story', 'task']) {
  fs.copyFileSync(`../../store/schema/schemas/${kind}.schema.json`, `out/schemas/${kind}.schema.json`);
}
