// Bundle src/main.js and src/app.css into dist/app.js and dist/app.css (plain static files).
import { build } from 'esbuild';

const watch = process.argv.includes('--watch');

const options = {
  entryPoints: [
    { in: 'src/main.js', out: 'app' },
    { in: 'src/app.css', out: 'app' },
  ],
  outdir: 'dist',
  bundle: true,
  format: 'iife',
  target: ['es2020'],
  minify: !watch,
  sourcemap: true,
  legalComments: 'eof',
  logLevel: 'info',
};

if (watch) {
  const { context } = await import('esbuild');
  const ctx = await context(options);
  await ctx.watch();
} else {
  await build(options);
}
