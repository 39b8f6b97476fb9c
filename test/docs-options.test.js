'use strict';

// docs/options.md is the options reference. It holds every option index.d.ts
// types (AgentOptions: HttpAgent.KeepAliveOptions, and the dns settings in
// DnsOptions), and none the runtime does not know. What the runtime knows is
// read from its behaviour: a key one letter off an option it knows gets a
// STEADY_AGENT_UNKNOWN_OPTION warning naming that option (or, for a
// deprecated alias, the option that replaces it).
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.join(__dirname, '..');
const doc = fs.readFileSync(path.join(root, 'docs', 'options.md'), 'utf8');

/** The properties of `HttpAgent.<name>` in index.d.ts, inherited ones included. */
function typedOptions(interfaceName) {
  const file = path.join(root, 'index.d.ts');
  const program = ts.createProgram([file], { strict: true, types: ['node'], noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  let found;
  const visit = (node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === interfaceName
      && ts.isModuleBlock(node.parent) && node.parent.parent.name.text === 'HttpAgent') found = node;
    ts.forEachChild(node, visit);
  };
  visit(source);
  assert.ok(found, `HttpAgent.${interfaceName} not found in index.d.ts`);
  return checker.getPropertiesOfType(checker.getTypeAtLocation(found)).map((symbol) => symbol.name).sort();
}

/** The options the reference documents: its `### \`name\`` headings under "## Reference". */
function documentedOptions() {
  const reference = doc.slice(doc.indexOf('\n## Reference\n'), doc.indexOf('\n## ', doc.indexOf('\n## Reference\n') + 1));
  return [...reference.matchAll(/^### `(\w+)`/gm)].map((m) => m[1]).sort();
}

/** The dns settings the reference documents: the first column of its table. */
function documentedDnsSettings() {
  const section = doc.slice(doc.indexOf('\n## `dns` settings\n'));
  return [...section.slice(0, section.indexOf('\n## ', 1)).matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]).sort();
}

/**
 * For each name, the option the runtime's near-miss warning names for the
 * name with one letter added, in a process of its own (warnings come once per
 * key per process). A name the runtime knows is named back (or its replacement).
 */
function runtimeSuggestions(names) {
  const script = `
    const { HttpsAgent } = require('.');
    const seen = {};
    const names = ${JSON.stringify(names)};
    let current;
    process.on('warning', (warning) => {
      if (warning.code !== 'STEADY_AGENT_UNKNOWN_OPTION') return;
      seen[current] = [...warning.message.matchAll(/"(\\w+)"/g)].map((m) => m[1]).slice(1);
    });
    (async () => {
      for (const name of names) {
        current = name;
        new HttpsAgent({ [name + 'q']: 1 }).destroy();
        await new Promise((resolve) => setImmediate(resolve));
      }
      process.stdout.write(JSON.stringify(seen));
    })();`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
}

describe('docs/options.md, the options reference', function () {
  this.timeout(60000);

  const documented = documentedOptions();
  let typed;
  before(() => {
    typed = typedOptions('KeepAliveOptions');
  });

  it('documents the options it should (the parse finds them)', () => {
    for (const name of ['freeSocketTimeout', 'timeout', 'maxSockets', 'dns', 'proxy']) assert.ok(documented.includes(name), name);
  });

  it('documents every option index.d.ts types as the agent\'s own', () => {
    assert.deepEqual(typed.filter((name) => !documented.includes(name)), [], 'typed but not documented');
  });

  it('documents only options index.d.ts types (the agent\'s own, or Node\'s agent options it reads)', () => {
    const all = typedOptions('HttpsOptions');
    assert.deepEqual(documented.filter((name) => !all.includes(name)), [], 'documented but not typed');
  });

  it('documents only options the runtime knows, and every one it knows among those typed', () => {
    const candidates = typedOptions('HttpsOptions');
    const suggestions = runtimeSuggestions(candidates);
    const deprecated = new Map([...doc.matchAll(/^### `(\w+)` \(deprecated\)\n\n- \*\*Kind:\*\* \w+\. Deprecated alias of `(\w+)`/gm)]
      .map((m) => [m[1], m[2]]));
    const known = candidates.filter((name) => (suggestions[name] ?? []).includes(deprecated.get(name) ?? name));
    assert.deepEqual(documented.filter((name) => !known.includes(name)), [], 'documented but unknown to the runtime');
    assert.deepEqual(known.filter((name) => !documented.includes(name)), [], 'known to the runtime but not documented');
  });

  it('documents every dns setting index.d.ts types, and no other', () => {
    assert.deepEqual(documentedDnsSettings(), typedOptions('DnsOptions'));
  });

  it('gives each option of the reference a kind and a default, as the code does', () => {
    const { HttpAgent } = require('..');
    const agent = new HttpAgent();
    try {
      const defaults = {
        keepAlive: 'true', keepAliveMsecs: '1000', tcpKeepAlive: 'true', freeSocketTimeout: '4000',
        connectTimeout: '0', socketActiveTTL: '0', serverTimeoutMargin: '1000', learnServerTimeout: 'true',
        maxQueue: 'Infinity', queueTimeout: '0',
      };
      for (const [name, text] of Object.entries(defaults)) {
        assert.equal(String(agent.options[name]), text, `agent.options.${name}`);
        const section = doc.slice(doc.indexOf(`### \`${name}\``));
        assert.match(section.slice(0, section.indexOf('\n### ', 1)), new RegExp(`\\*\\*Default:\\*\\* \`${text}\``), name);
      }
      assert.equal(agent.options.timeout, 8000);
      assert.equal(agent.maxSockets, Infinity);
      assert.equal(agent.maxFreeSockets, 256);
      assert.equal(agent.maxTotalSockets, Infinity);
      assert.equal(agent.scheduling, 'lifo');
    } finally {
      agent.destroy();
    }
  });
});
