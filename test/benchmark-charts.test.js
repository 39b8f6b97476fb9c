'use strict';

// The committed charts (benchmark/charts/*.svg): one per charted scenario in
// benchmark/results.json, each a well-formed SVG that a browser can size,
// and each what benchmark/charts.js renders from the saved results today
// (so a results.json saved without re-rendering the charts fails here).
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { XMLParser, XMLValidator } = require('fast-xml-parser');
const { renderCharts, CHARTS, CHARTS_DIR } = require('../benchmark/charts');
const results = require('../benchmark/results.json');
const { tempDirEach } = require('./support/cleanup');

const charted = Object.keys(CHARTS).filter((id) => results.scenarios[id]);

describe('benchmark charts', function () {
  this.timeout(60000);
  const tmp = tempDirEach('charts-');

  it('has a chart for every scenario in results.json, and nothing else in benchmark/charts', () => {
    assert.ok(charted.length >= 8, `only ${charted.join(', ')}`);
    assert.deepEqual(fs.readdirSync(CHARTS_DIR).sort(), charted.map((id) => `${id}.svg`).sort());
  });

  for (const id of Object.keys(CHARTS)) {
    it(`${id}.svg is a well-formed SVG with a size and a viewBox, naming every agent of its table (as a bar, or as having no figure)`, function () {
      if (!results.scenarios[id]) this.skip();
      const text = fs.readFileSync(path.join(CHARTS_DIR, `${id}.svg`), 'utf8');
      assert.equal(XMLValidator.validate(text), true);
      const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(text);
      assert.deepEqual(Object.keys(doc), ['svg']);
      const { width, height, viewBox, xmlns } = doc.svg;
      assert.equal(xmlns, 'http://www.w3.org/2000/svg');
      assert.ok(Number(width) > 100 && Number(height) > 100, `${width} x ${height}`);
      assert.equal(viewBox, `0 0 ${width} ${height}`);
      for (const table of results.scenarios[id].tables) {
        const agent = table.columns.indexOf('agent');
        for (const row of table.rows) assert.ok(text.includes(escapeXml(row[agent])), `${row[agent]} missing`);
      }
    });
  }

  it('the benchmark README shows every chart', () => {
    const readme = fs.readFileSync(path.join(__dirname, '..', 'benchmark', 'README.md'), 'utf8');
    const shown = [...readme.matchAll(/!\[[^\]]+\]\(charts\/([\w-]+)\.svg\)/g)].map((m) => m[1]);
    assert.deepEqual(shown.slice().sort(), charted.slice().sort());
  });

  it('re-rendering from results.json gives the committed charts (node benchmark/charts.js)', async () => {
    const written = await renderCharts({ dir: tmp() });
    assert.deepEqual(written.map((file) => path.basename(file)), charted.map((id) => `${id}.svg`));
    for (const file of written) {
      assert.equal(fs.readFileSync(file, 'utf8'), fs.readFileSync(path.join(CHARTS_DIR, path.basename(file)), 'utf8'),
        `${path.basename(file)} is out of date: run node benchmark/charts.js`);
    }
  });
});

function escapeXml(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&#39;').replace(/"/g, '&quot;');
}
