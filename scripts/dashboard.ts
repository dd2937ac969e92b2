// Writes monitoring/grafana-dashboard.json from src/constructs/monitoring-dashboard.ts (run by scripts/synth.sh).
//   node scripts/dashboard.ts           rewrite it
//   node scripts/dashboard.ts --check   fail if it is not what the sources make
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { sampleDbDashboard } from '../src/constructs/monitoring-dashboard.ts';

const path = 'monitoring/grafana-dashboard.json';
const wanted = `${JSON.stringify(sampleDbDashboard(), null, 2)}\n`;
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {}
  if (current !== wanted) {
    console.error(`${path} is stale: run 'npm run synth' and commit the result`);
    process.exit(1);
  }
  console.log(`${path} is fresh`);
} else {
  mkdirSync('monitoring', { recursive: true });
  writeFileSync(path, wanted);
  console.log(`wrote ${path}`);
}
