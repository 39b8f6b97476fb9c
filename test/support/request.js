'use strict';

// Promise helpers over the bare http/https modules, so tests read as steps.
const http = require('node:http');
const https = require('node:https');

/**
 * Makes one request and collects the body. Resolves with
 * { status, headers, body, req, res, socket, reusedSocket }; rejects with the
 * request's error, which carries `.req`.
 */
function request(url, options = {}) {
  const mod = url.startsWith('https:') ? https : http;
  const { body, ...rest } = options;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, rest, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({
        status: res.statusCode,
        headers: res.headers,
        body: Buffer.concat(chunks).toString(),
        req,
        res,
        socket: req.socket,
        reusedSocket: req.reusedSocket,
      }));
      res.on('error', (err) => { err.req = req; reject(err); });
    });
    req.on('error', (err) => { err.req = req; reject(err); });
    req.end(body);
  });
}

/** The error a request's promise rejects with; fails the test if it resolves instead. */
async function requestError(promise) {
  const outcome = await promise.then((res) => res, (err) => err);
  if (!(outcome instanceof Error)) throw new Error(`expected the request to fail, got ${outcome.status}`);
  return outcome;
}

/** Resolves on the next turn of the event loop after `ms` milliseconds. */
function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves once `predicate()` is true, checking every few milliseconds. */
async function waitFor(predicate, { interval = 5, limit = 5000 } = {}) {
  const started = Date.now();
  while (!predicate()) {
    if (Date.now() - started > limit) throw new Error(`waitFor: condition not met within ${limit} ms`);
    await delay(interval);
  }
}

module.exports = { request, requestError, delay, waitFor };
