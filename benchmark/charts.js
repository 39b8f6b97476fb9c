'use strict';

// Renders each scenario's comparison in benchmark/results.json as an SVG bar
// chart, benchmark/charts/<scenario>.svg, with vega-lite (compiled to a vega
// spec, rendered to SVG by vega in Node: no browser, no canvas). `npm run
// bench` runs it after the scenarios; run it alone to re-render from the
// saved results:
//
//   node benchmark/charts.js
//
// The bars are the figures of the scenario's saved table, labelled with the
// table's own text, so a chart never says more than results.md. A cell
// "n / m" (race) is drawn as a percentage of m.
const fs = require('node:fs');
const path = require('node:path');
const vega = require('vega');
const vegaLite = require('vega-lite');
const { load, describeMachine, DIR } = require('./lib/results');

const CHARTS_DIR = path.join(DIR, 'charts');
const OURS = 'steady-agent';

// Per scenario: the columns drawn (matched by their heading), one panel each,
// side by side, and the column whose values split the bars into groups.
const CHARTS = {
  proxy: { measures: [{ column: /^req\/s$/, axis: 'requests per second', better: 'higher' }] },
  'client-cost': { measures: [{ column: /^CPU µs\/req/, axis: 'client CPU µs per request, median', better: 'lower' }] },
  'https-cost': { measures: [{ column: /^CPU µs\/req/, axis: 'client CPU µs per request, median', better: 'lower' }] },
  instructions: {
    // The table titles head their panels (protocol, requests in flight).
    subtitle: 'Counted by valgrind (callgrind) in the client process, one request in flight and 50, http and https',
    groupByTable: true,
    measures: [{ column: /^instructions\/req$/, axis: 'client instructions per request', better: 'lower' }],
  },
  nagle: {
    measures: [
      { column: /^http median ms$/, axis: 'http: median ms', better: 'lower' },
      { column: /^https median ms$/, axis: 'https: median ms', better: 'lower' },
    ],
  },
  race: {
    // The first table: the one-fault table has its own columns (text only).
    tables: 1,
    group: /^server$/,
    groupLabels: {
      hinted: 'hinted: announces its idle limit (Keep-Alive: timeout) and closes at it',
      node: 'node: Node\'s own http.Server (keepAliveTimeout, announced)',
      hintless: 'hintless: closes idle connections at a limit it does not announce',
      restart: 'restart: closes every idle connection at once',
    },
    measures: [
      { column: /^failed requests$/, axis: 'requests failed, %', better: 'lower' },
      { column: /^requests on reused sockets$/, axis: 'requests on reused sockets, %', better: 'higher' },
    ],
  },
  'axios-latency': {
    measures: [
      { column: /^1st request ms$/, axis: 'first request, ms', better: 'lower' },
      { column: /^requests 2–\d+ ms \(median\)$/, axis: 'each later request, median ms', better: 'lower' },
    ],
  },
  'proxy-tunnel': {
    measures: [
      { column: /^req\/s$/, axis: 'requests per second', better: 'higher' },
      { column: /^CPU µs\/req$/, axis: 'client CPU µs per request', better: 'lower' },
    ],
  },  'dns-flip': {
    measures: [
      { column: /^all on new address after, s$/, axis: 'seconds until every request reaches the new address', better: 'lower' },
      { column: /^requests to old address after flip$/, axis: 'requests to the old address after the flip', better: 'lower' },
      { column: /^requests lost$/, axis: 'requests lost', better: 'lower' },
    ],
  },
  'happy-eyeballs': {
    measures: [
      { column: /^first drops: median ms$/, axis: 'first address drops: ms to the response, median', better: 'lower' },
      { column: /^late first: median ms$/, axis: 'first late, second drops: ms to the response, median', better: 'lower' },
    ],
  },
  // A panel per table, each table with one of the two measures; each panel
  // scaled on its own: 10,000 origins cost a multiple of 1,000 per socket
  // for some agents, and would flatten the other bars.
  'many-origins': {
    // The six table titles head their panels; joined they would make the
    // chart as wide as they are long.
    subtitle: 'Client CPU per free socket closed as the pool drains, and heap per idle socket',
    groupByTable: true,
    eachTableOwnMeasure: true,
    scalePerGroup: true,
    measures: [
      { column: /^CPU µs\/socket closed$/, axis: 'client CPU µs per socket closed', better: 'lower' },
      { column: /^heap bytes\/socket$/, axis: 'heap bytes per idle socket', better: 'lower' },
    ],
  },
};

/** A table cell as a number: "6,509", "147.5k", "29 / 216" (as a percentage); null for "n/a". */
function cellValue(cell) {
  const text = String(cell).trim();
  const ratio = text.match(/^([\d,.]+) \/ ([\d,.]+)$/);
  if (ratio) return (100 * number(ratio[1])) / number(ratio[2]);
  const scaled = text.match(/^([\d,.]+)k$/);
  if (scaled) return number(scaled[1]) * 1000;
  const value = number(text);
  return Number.isFinite(value) ? value : null;
}

function number(text) {
  return Number(text.replace(/,/g, ''));
}

function columnIndex(table, pattern, scenario, optional = false) {
  const i = table.columns.findIndex((column) => pattern.test(column));
  if (i === -1 && !optional) throw new Error(`${scenario}: no column matching ${pattern} in "${table.title}"`);
  return i;
}

/** The tables a chart draws: all, or the first `chart.tables`. */
function chartedTables(entry, chart) {
  return chart.tables === undefined ? entry.tables : entry.tables.slice(0, chart.tables);
}

/** The distinct values in first-seen order: bars and groups in the table's order. */
function unique(list) {
  return [...new Set(list)];
}

/** Bars in groups: by a column, or by table when a scenario saved several (instructions: http, https). */
function groupName(chart, table, cell, tables) {
  if (chart.groupByTable) return tables > 1 ? table.title : '';
  return (chart.groupLabels && chart.groupLabels[cell]) || cell;
}

/** One row per bar: { group, agent, measure, value, label }; and what had no figure. */
function chartData(id, entry, chart) {
  const values = [];
  const missing = new Set();
  for (const table of chartedTables(entry, chart)) {
    const group = chart.group ? columnIndex(table, chart.group, id) : -1;
    const agent = table.columns.indexOf('agent');
    // With eachTableOwnMeasure a table has some of the measures, at least one.
    const columns = chart.measures.map((measure) => columnIndex(table, measure.column, id, chart.eachTableOwnMeasure));
    if (columns.every((i) => i === -1)) throw new Error(`${id}: "${table.title}" has none of the charted columns`);
    for (const row of table.rows) {
      chart.measures.forEach((measure, m) => {
        if (columns[m] === -1) return;
        const cell = row[columns[m]];
        const value = cellValue(cell);
        if (value === null) {
          missing.add(row[agent]);
          return;
        }
        values.push({
          group: groupName(chart, table, group === -1 ? '' : row[group], chartedTables(entry, chart).length),
          agent: row[agent],
          measure: m,
          value,
          label: String(cell),
        });
      });
    }
  }
  return { values, missing: [...missing] };
}

/**
 * One panel: the bars of one group (a row of panels) for one measure (a
 * column). Every panel of a column has the same x domain, so bars compare
 * down the column (unless the chart scales each group on its own); the
 * agents' names only on the first column, the x axis only on the last row
 * of the measure.
 */
function panel(chart, values, group, m, { first, last }) {
  const measure = chart.measures[m];
  const column = values.filter((v) => v.measure === m);
  const mine = column.filter((v) => v.group === group);
  // Room past the longest bar for its label.
  const max = Math.max(...(chart.scalePerGroup ? mine : column).map((v) => v.value)) * 1.3 || 1;
  return {
    data: { values: mine },
    width: 300,
    // A number, not { step }: 'flush' bounds place panels by their given size.
    height: 22 * unique(mine.map((v) => v.agent)).length,
    encoding: {
      y: {
        field: 'agent',
        type: 'nominal',
        sort: unique(mine.map((v) => v.agent)),
        title: null,
        axis: first ? { labelLimit: 0, labelFontSize: 12 } : null,
      },
      x: {
        field: 'value',
        type: 'quantitative',
        scale: { domain: [0, max], nice: false },
        title: last ? `${measure.axis} (${measure.better} is better)` : null,
        axis: last || chart.scalePerGroup
          ? { format: ',~f', tickCount: 5, titleFontSize: 12, labelFontSize: 11 }
          : { labels: false, ticks: false, tickCount: 5 },
      },
    },
    layer: [
      {
        mark: { type: 'bar', height: { band: 0.75 } },
        encoding: {
          color: {
            condition: { test: `datum.agent === '${OURS}' || indexof(datum.agent, '${OURS} ') === 0`, value: '#1f77b4' },
            value: '#9aa5b1',
          },
        },
      },
      {
        mark: { type: 'text', align: 'left', baseline: 'middle', dx: 4, fontSize: 11 },
        encoding: { text: { field: 'label' } },
      },
    ],
  };
}

function chartSpec(id, entry, chart) {
  const { values, missing } = chartData(id, entry, chart);
  const groups = unique(values.map((v) => v.group));
  // The measures each group has bars for, and the last group of each measure.
  const measuresOf = (group) => chart.measures.map((_, m) => m).filter((m) => values.some((v) => v.group === group && v.measure === m));
  const lastGroupOf = (m) => groups.filter((group) => measuresOf(group).includes(m)).at(-1);
  const rows = groups.map((group) => ({
    ...(group ? { title: { text: group, anchor: 'start', fontSize: 13, offset: 8 } } : {}),
    hconcat: measuresOf(group).map((m, i) => panel(chart, values, group, m, { first: i === 0, last: group === lastGroupOf(m) })),
    // Panels side by side placed by their plot width alone: without a
    // canvas, vega estimates text wider than it is, and would leave a wide
    // gap for each axis title.
    bounds: 'flush',
    spacing: 40,
  }));
  const subtitle = [
    chart.subtitle ?? (chartedTables(entry, chart).length === 1 ? entry.tables[0].title : chartedTables(entry, chart).map((t) => t.title).join('; ')),
    `Measured ${entry.date.slice(0, 10)} on ${describeMachine(entry.machine)}`,
  ];
  if (missing.length) subtitle.push(`No figure (n/a in the table): ${missing.join(', ')}`);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: entry.title, subtitle, anchor: 'start', fontSize: 16, subtitleFontSize: 12, subtitleColor: '#444', offset: 14 },
    vconcat: rows,
    spacing: 12,
    config: {
      background: 'white',
      padding: 16,
      font: 'Helvetica, Arial, sans-serif',
      view: { stroke: null },
      axis: { labelColor: '#222', titleColor: '#222', gridColor: '#e6e6e6' },
    },
  };
}

async function renderSvg(spec) {
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Renders one SVG per charted scenario in results.json; returns the files written. */
async function renderCharts({ results = load(), dir = CHARTS_DIR } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const written = [];
  for (const [id, chart] of Object.entries(CHARTS)) {
    const entry = results.scenarios[id];
    if (!entry) continue;
    const file = path.join(dir, `${id}.svg`);
    fs.writeFileSync(file, `${await renderSvg(chartSpec(id, entry, chart))}\n`);
    written.push(file);
  }
  return written;
}

module.exports = { renderCharts, chartSpec, CHARTS, CHARTS_DIR };

if (require.main === module) {
  renderCharts().then((files) => {
    for (const file of files) console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }).catch((err) => {
    console.error(err && err.stack ? err.stack : err);
    process.exitCode = 1;
  });
}
