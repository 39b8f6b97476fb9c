'use strict';

// A table is { title, columns: [string], rows: [[string]] } with every cell
// already formatted; it prints as aligned text and renders as markdown.

const isNumeric = (cell) => /^[-+~]?[\d,.]+(\s?(%|ms|µs|x))?$/.test(String(cell).trim());

function formatText(table) {
  const widths = table.columns.map((column, i) => Math.max(
    String(column).length,
    ...table.rows.map((row) => String(row[i]).length),
  ));
  const line = (cells) => cells.map((cell, i) => {
    const text = String(cell);
    return i > 0 && isNumeric(text) ? text.padStart(widths[i]) : text.padEnd(widths[i]);
  }).join('  ').trimEnd();
  const out = [];
  if (table.title) out.push(table.title);
  out.push(line(table.columns));
  out.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of table.rows) out.push(line(row));
  return out.join('\n');
}

function printTable(table) {
  console.log(`\n${formatText(table)}\n`);
}

const escapeCell = (cell) => String(cell).replace(/\|/g, '\\|');

function formatMarkdown(table) {
  const out = [];
  if (table.title) out.push(`**${table.title}**`, '');
  out.push(`| ${table.columns.map(escapeCell).join(' | ')} |`);
  out.push(`|${table.columns.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`);
  for (const row of table.rows) out.push(`| ${row.map(escapeCell).join(' | ')} |`);
  return out.join('\n');
}

module.exports = { formatText, printTable, formatMarkdown };
