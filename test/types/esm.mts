// Compiled (never run) by `npm run test:types`: an ES module consumer,
// resolved through the package's "import" condition.
import * as https from 'node:https';
import Agent, { HttpAgent, HttpsAgent, constants } from 'steady-agent';
import { observeAgent } from 'steady-agent/otel';
import got from 'got';
import fetch from 'node-fetch';

const http = new Agent({ timeout: '60s' });
const sameClass: typeof HttpAgent = Agent;
const secure: https.Agent = new HttpsAgent({ freeSocketTimeout: '4s', ca: '' });
const id: symbol = constants.CURRENT_ID;

got('http://127.0.0.1/', { agent: { http, https: secure }, retry: { limit: 0 } });
fetch('http://127.0.0.1/', { agent: http });
const stop: () => void = observeAgent(new HttpsAgent());

export { sameClass, id, stop };
