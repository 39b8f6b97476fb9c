'use strict';

// index.d.ts against the runtime it describes. `npm run test:types` checks
// that the declarations compile and accept the documented usage; this checks
// that they name what index.js actually exports, no more and no less. The
// declarations are read with the TypeScript compiler, with the settings of
// test/types/tsconfig.json.
const assert = require('node:assert/strict');
const http = require('node:http');
const path = require('node:path');
const ts = require('typescript');
const Agent = require('steady-agent');

const root = path.join(__dirname, '..');
const declarationFile = path.join(root, 'index.d.ts');

// The compiler names a member keyed by a well-known symbol `__@asyncDispose@<id>`.
function wellKnown(name) {
  const match = /^__@(\w+)@\d+$/.exec(name);
  return match === null ? name : `Symbol.${match[1]}`;
}

/** `name` as a property key: 'Symbol.asyncDispose' is the symbol itself. */
function propertyKey(name) {
  return name.startsWith('Symbol.') ? Symbol[name.slice('Symbol.'.length)] : name;
}

function loadDeclarations() {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(__dirname, 'types', 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic() {} });
  const program = ts.createProgram([declarationFile], config.options);
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(declarationFile));
  const exported = checker.resolveExternalModuleSymbol(moduleSymbol); // the `export =` class
  const members = new Map(checker.getExportsOfModule(moduleSymbol).map((symbol) => [symbol.name, symbol]));

  const declaredHere = (symbol) => (symbol.declarations ?? [])
    .some((declaration) => path.resolve(declaration.getSourceFile().fileName) === declarationFile);
  const names = (type, { own = false } = {}) => checker.getPropertiesOfType(type)
    .filter((symbol) => !own || declaredHere(symbol))
    .map((symbol) => wellKnown(symbol.name))
    .sort();
  const classInstance = (symbol) => checker.getDeclaredTypeOfSymbol(symbol);

  const source = program.getSourceFile(declarationFile);
  return {
    diagnostics: [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)],
    statics: names(checker.getTypeOfSymbol(exported), { own: true }).filter((name) => name !== 'prototype'),
    httpAgent: {
      own: names(classInstance(exported), { own: true }),
      all: names(classInstance(exported)),
    },
    httpsAgent: {
      own: names(classInstance(members.get('HttpsAgent')), { own: true }),
      all: names(classInstance(members.get('HttpsAgent'))),
    },
    status: names(classInstance(members.get('AgentStatus'))),
    resolvedOptions: names(classInstance(members.get('ResolvedOptions'))),
    constants: names(checker.getTypeOfSymbol(members.get('constants'))),
  };
}

/** Public names on a class's own prototype that core's http.Agent does not already have. */
function runtimeOwnMembers(Class) {
  const core = new Set(Object.getOwnPropertyNames(http.Agent.prototype));
  const symbols = Object.getOwnPropertySymbols(Class.prototype)
    .map((symbol) => Object.keys(Object.getOwnPropertyDescriptors(Symbol)).find((name) => Symbol[name] === symbol))
    .filter((name) => name !== undefined)
    .map((name) => `Symbol.${name}`);
  return Object.getOwnPropertyNames(Class.prototype)
    .filter((name) => name !== 'constructor' && !core.has(name))
    .concat(symbols)
    .sort();
}

describe('index.d.ts matches the runtime', function () {
  this.timeout(60000); // loading the compiler and @types/node takes a few seconds

  let types;
  before(() => {
    types = loadDeclarations();
  });

  it('compiles on its own', () => {
    const messages = types.diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(messages, []);
  });

  it('declares exactly the exports of index.js', () => {
    assert.deepEqual(types.statics, Object.keys(Agent).sort());
  });

  for (const name of ['HttpAgent', 'HttpsAgent']) {
    describe(name, () => {
      const key = name === 'HttpAgent' ? 'httpAgent' : 'httpsAgent';

      it('declares every public member the class adds to core\'s agent', () => {
        for (const member of runtimeOwnMembers(Agent[name])) {
          assert.ok(types[key].all.includes(member), `${name}.prototype.${member} has no declaration`);
        }
      });

      it('declares no member an instance lacks', () => {
        const agent = new Agent[name]();
        try {
          // `in` does not run the getters, so the deprecated ones stay quiet.
          for (const member of types[key].own) assert.ok(propertyKey(member) in agent, `${name}#${member} is declared but missing`);
        } finally {
          agent.destroy();
        }
      });

      it('types agent.options as the normalised options', () => {
        const agent = new Agent[name]({ timeout: '60s', freeSocketTimeout: '4s' });
        try {
          for (const option of types.resolvedOptions) {
            const expected = ['keepAlive', 'learnServerTimeout', 'tcpKeepAlive'].includes(option) ? 'boolean' : 'number';
            assert.equal(typeof agent.options[option], expected, `options.${option}`);
          }
        } finally {
          agent.destroy();
        }
      });
    });
  }

  it('declares the fields of getCurrentStatus()', () => {
    const agent = new Agent.HttpsAgent();
    try {
      assert.deepEqual(types.status, Object.keys(agent.getCurrentStatus()).sort());
    } finally {
      agent.destroy();
    }
  });

  it('declares every constant', () => {
    assert.deepEqual(types.constants, Object.keys(Agent.constants).sort());
  });
});
