import { type Html, html } from '../status-page/index.ts';

const WIDTH = 720;
const HEIGHT = 180;
const LEFT = 40;
const BOTTOM = 22;
const TOP = 8;

/**
 * Files applied per day as an inline SVG bar chart: no script, no outside asset, styled by the console's sheet
 * (a CSP that allows no style attribute allows SVG's presentation attributes). Each bar has a title with its day
 * and count; the figure's caption says the totals in words.
 */
export function dayChart(days: readonly { day: string; files: number }[]): Html {
  const max = Math.max(1, ...days.map((d) => d.files));
  const top = niceCeiling(max);
  const slot = (WIDTH - LEFT) / Math.max(1, days.length);
  const plot = HEIGHT - BOTTOM - TOP;
  const bars = days.map((d, i) => {
    const h = Math.round((d.files / top) * plot * 10) / 10;
    const x = Math.round((LEFT + i * slot + slot * 0.15) * 10) / 10;
    const y = Math.round((TOP + plot - h) * 10) / 10;
    const w = Math.round(slot * 0.7 * 10) / 10;
    const title = `${d.day}: ${d.files} ${d.files === 1 ? 'file' : 'files'}`;
    return html`<rect class="bar" x="${x}" y="${y}" width="${w}" height="${h}"><title>${title}</title></rect>`;
  });
  // a date under the first bar, every seventh after it (unless near the last), and the last
  const labels = days.flatMap((d, i) =>
    (i % 7 === 0 && days.length - 1 - i >= 4) || i === days.length - 1
      ? [
          html`<text x="${Math.round(LEFT + i * slot + slot / 2)}" y="${HEIGHT - 6}" text-anchor="middle">${d.day.slice(5)}</text>`,
        ]
      : [],
  );
  return html`<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="days-chart-title" xmlns="http://www.w3.org/2000/svg">
<title id="days-chart-title">Files applied per day, the last ${days.length} days: at most ${max} on a day</title>
<line class="axis" x1="${LEFT}" y1="${TOP + plot}" x2="${WIDTH}" y2="${TOP + plot}"/>
<line class="axis" x1="${LEFT}" y1="${TOP}" x2="${WIDTH}" y2="${TOP}"/>
<text x="${LEFT - 6}" y="${TOP + 4}" text-anchor="end">${top}</text>
<text x="${LEFT - 6}" y="${TOP + plot + 4}" text-anchor="end">0</text>
${bars}
${labels}
</svg>`;
}

/** The axis's top: 1, 2 or 5 times a power of ten, at least `n`. */
function niceCeiling(n: number): number {
  const power = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * power >= n) return m * power;
  return 10 * power;
}
