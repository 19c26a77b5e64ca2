import { readFileSync } from 'node:fs';

/**
 * The secrets file (`secretsFile` in the config): `NAME=value` lines in the subset of systemd's EnvironmentFile
 * syntax that both read the same (blank lines, `#` or `;` comments, a value optionally in single or double quotes),
 * so one file can serve the unit's EnvironmentFile and the daemon. The daemon reads it at start and at every reload,
 * which is what lets a key be rotated without a restart. Problems name the line, never the value.
 */
export function readSecretsFile(path: string): { values: Record<string, string>; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return {
      values: {},
      problems: [`  /secretsFile: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`],
    };
  }
  return parseSecrets(text, path);
}

function parseSecrets(text: string, path: string): { values: Record<string, string>; problems: string[] } {
  const values: Record<string, string> = Object.create(null); // a NAME of __proto__ is a name like any other
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    const eq = line.indexOf('=');
    const name = eq > 0 ? line.slice(0, eq).trim() : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      problems.push(`  /secretsFile: ${path} line ${i + 1}: expected NAME=value (NAME: letters, digits, _)`);
      return;
    }
    let value = line.slice(eq + 1).trim();
    const q = value[0];
    if ((q === '"' || q === "'") && value.length >= 2 && value.endsWith(q)) value = value.slice(1, -1);
    else if (q === '"' || q === "'") {
      problems.push(`  /secretsFile: ${path} line ${i + 1}: the value of ${name} opens a quote it does not close`);
      return;
    }
    values[name] = value;
  });
  return { values, problems };
}
