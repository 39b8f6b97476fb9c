// Compiled (never run) by `npm run test:types`: the steady-agent/retry
// subpath, with the libraries its helpers plug into (their own types).
import * as http from 'node:http';
import axios from 'axios';
import axiosRetry from 'axios-retry';
import got from 'got';
import fetch from 'node-fetch';
import { HttpAgent, HttpsAgent } from 'steady-agent';
import type { ReusedSocketError } from 'steady-agent';
import {
  isReplayable, axiosRetryCondition, axiosRetryOptions, gotRetryOptions, wrapFetch, request,
} from 'steady-agent/retry';
import type { RetryOptions, ReusedSocketMarks } from 'steady-agent/retry';

const agent = new HttpAgent();
const secure = new HttpsAgent();

// axios-retry takes the options, or the condition alone.
const client = axios.create({ httpAgent: agent, httpsAgent: secure, proxy: false });
axiosRetry(client, axiosRetryOptions());
axiosRetry(client, axiosRetryOptions({ retries: 2, delay: '10ms', onRetry: (error, attempt) => console.log(error, attempt) }));
axiosRetry(client, { retries: 1, retryCondition: axiosRetryCondition });

// got takes them in extend() and in a request's options.
const retrying = got.extend({ agent: { http: agent, https: secure } }, gotRetryOptions());
retrying.get('http://127.0.0.1/', gotRetryOptions({ retries: 3 }));

// wrapFetch keeps node-fetch's own signature.
const fetchWithRetry: typeof fetch = wrapFetch(fetch, { retries: '1' });
fetchWithRetry('http://127.0.0.1/', { agent }).then((res) => res.text());

// request() resolves with the response.
const res: Promise<http.IncomingMessage> = request('http://127.0.0.1/', { agent, method: 'PUT', body: 'x', retry: { retries: 1 } });
request({ host: '127.0.0.1', path: '/', agent, body: Buffer.from('x') });
request(new URL('https://127.0.0.1/'), { agent: secure, ca: '' });

// The marks on an error.
function report(err: unknown): string {
  if (isReplayable(err)) return 'replayable';
  const marked = err as Partial<ReusedSocketError>;
  if (marked.reusedSocket === true) return `${marked.code} after ${marked.socketIdleMs} ms idle, ${marked.socketRequests} before`;
  return 'other';
}
const marks: ReusedSocketMarks = { reusedSocket: true, socketIdleMs: 0, socketRequests: 1, staleSocket: true, replayable: false };
const settings: RetryOptions = { retries: 1, delay: 0, onRetry: undefined };

// @ts-expect-error retries is a count
axiosRetryOptions({ retries: true });
// @ts-expect-error request() needs a URL or options
request();
// @ts-expect-error a body is a string, bytes or a stream
request('http://127.0.0.1/', { body: 42 });

export { res, report, marks, settings };
