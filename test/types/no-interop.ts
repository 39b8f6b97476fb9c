// Compiled (never run) by `npm run test:types` under strict and
// exactOptionalPropertyTypes, WITHOUT esModuleInterop or
// allowSyntheticDefaultImports: the forms older TypeScript projects use.
import * as https from 'node:https';
import Agent = require('steady-agent');
import * as Namespace from 'steady-agent';
import { HttpsAgent, constants } from 'steady-agent';

const httpAgent: Agent = new Agent({ timeout: '60s', freeSocketTimeout: 4000 });
const viaProperty: Agent.HttpAgent = new Agent.HttpAgent({ keepAlive: true });
const httpsAgent: https.Agent = new Agent.HttpsAgent({ timeout: '1m', rejectUnauthorized: true });
const named: Agent.HttpsAgent = new HttpsAgent({ serverTimeoutMargin: '2s' });
const viaNamespace = new Namespace.HttpsAgent({ learnServerTimeout: false });
const options: Agent.HttpsOptions = { maxSockets: 4, ca: '' };
const status: Agent.AgentStatus = httpAgent.getCurrentStatus();
const total: number = status.createSocketCount + named.requestCount + viaNamespace.closeSocketCount;
const id: symbol = constants.SOCKET_REQUEST_COUNT;

// @ts-expect-error a duration is a number or a string
new Agent({ freeSocketTimeout: [] });
// @ts-expect-error no such status field
status.serverTimeouts;

export { viaProperty, httpsAgent, options, total, id };
