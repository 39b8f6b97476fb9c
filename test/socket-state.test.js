'use strict';

// lib/socket_state.js without sockets: a socket's state, its phases and
// transitions.
// The "socket" here is a plain object: the state's transitions touch none of
// it.
const assert = require('node:assert/strict');
const { SocketState, PHASES, stateOf, attachState } = require('../lib/state/socket_state');

const agent = { name: 'an agent' };
// What the socket's listeners reach: the agent's handler of socket events.
const owner = { agent };
const entry = { origin: 'a:1:' };

function fresh(now = 100) {
  const socket = {};
  const state = attachState(socket, new SocketState(socket, owner, { _agentKey: 'a:1:' }, entry, now, 7, 1700000000000));
  return { socket, state };
}

describe('SocketState', () => {
  it('starts active, with every field set', () => {
    const { socket, state } = fresh(100);
    assert.equal(stateOf(socket), state);
    assert.equal(state.agent, agent);
    assert.equal(state.pool, 'a:1:');
    assert.deepEqual(state.createOptions, { _agentKey: 'a:1:' });
    assert.equal(state.entry, entry);
    assert.equal(state.phase, PHASES.ACTIVE);
    assert.equal(state.idle, false);
    assert.equal(state.connected, false);
    assert.equal(state.createdAt, 100);
    assert.equal(state.createdWall, 1700000000000);
    assert.equal(state.id, 7);
    assert.equal(state.requests, 1);
    assert.equal(state.requestsFinished, 0);
    assert.equal(state.connectMs, 0);
    assert.equal(state.requestStartedAt, 100);
    assert.equal(state.freeDeadline, Infinity);
    assert.equal(state.requestsLeft, Infinity);
    assert.equal(state.serverTimeout, undefined);
    assert.equal(state.handedTo, null);
    assert.equal(state.closedBy, null);
    assert.equal(state.learnedFrom, false);
    assert.equal(state.closeReason, null);
    assert.equal(state.errored, false);
    assert.equal(state.removed, false);
  });

  it('has one shape: no transition adds a field', () => {
    const { state } = fresh();
    const keys = Object.keys(state);
    state.hint({ timeout: 5, max: 3 });
    state.free(200, 4200, 10);
    state.connect(150);
    state.picked(300);
    state.activate();
    state.handTo({}, 350, 15);
    state.handBack();
    state.finishRequest();
    state.free(400, 500, 20);
    state.startProbe(1000);
    state.markClosing('free-timeout');
    state.closedByServer();
    assert.deepEqual(Object.keys(state), keys);
  });

  it('keeps each yes/no fact apart, as a boolean', () => {
    const { state } = fresh();
    const facts = ['connected', 'learnedFrom', 'errored', 'removed', 'placeGivenUp'];
    for (const fact of facts) {
      state[fact] = true;
      for (const other of facts) assert.equal(state[other], other === fact, `${other} after ${fact} = true`);
      state[fact] = false;
      for (const other of facts) assert.equal(state[other], false);
    }
    state.errored = true;
    state.removed = true;
    state.errored = false;
    assert.equal(state.removed, true);
    assert.equal(state.errored, false);
  });

  it('adds one property to the socket, once', () => {
    const socket = { a: 1 };
    const before = Reflect.ownKeys(socket).length;
    const state = attachState(socket, new SocketState(socket, owner, {}, entry, 1, 0, 0));
    state.free(2, 3, 0);
    state.activate();
    state.markClosing('destroy');
    assert.equal(Reflect.ownKeys(socket).length, before + 1);
  });

  it('free -> picked -> active measures the idle time and counts the request', () => {
    const { state } = fresh(100);
    state.free(1000, 5000, 42);
    assert.equal(state.phase, PHASES.FREE);
    assert.equal(state.idle, true);
    assert.equal(state.freedAt, 1000);
    assert.equal(state.freeDeadline, 5000);
    assert.equal(state.bytesReadWhenFreed, 42);
    state.picked(1750);
    assert.equal(state.idleBeforeReuse, 750);
    assert.equal(state.requestStartedAt, 1750);
    state.activate();
    assert.equal(state.phase, PHASES.ACTIVE);
    assert.equal(state.idle, false);
    assert.equal(state.requests, 2);
  });

  it('phase, limitedBy and closeReason, packed in a few bits each, read back every value written; an unknown one throws', () => {
    const { state } = fresh();
    const { CLOSE_REASONS } = require('../lib/state/close_reasons');
    const flags = state.flags;
    for (const phase of Object.values(PHASES)) {
      for (const limitedBy of ['freeSocketTimeout', 'ttl', 'hint', 'learned']) {
        for (const reason of [null, ...Object.values(CLOSE_REASONS)]) {
          state.phase = phase;
          state.limitedBy = limitedBy;
          state.closeReason = reason;
          assert.deepEqual([state.phase, state.limitedBy, state.closeReason], [phase, limitedBy, reason]);
        }
      }
    }
    state.phase = PHASES.ACTIVE;
    state.limitedBy = 'freeSocketTimeout';
    state.closeReason = null;
    assert.equal(state.flags, flags, 'the yes/no facts untouched');
    assert.ok(Number.isInteger(state.flags) && state.flags < 2 ** 30);
    assert.throws(() => { state.phase = 'asleep'; }, { name: 'TypeError', message: /phase: not one of its values: asleep/ });
    assert.throws(() => { state.closeReason = 'bored'; }, /closeReason/);
  });

  it('connect() measures the connect time from creation: the stale judgement\'s round trip', () => {
    const { state } = fresh(100);
    state.connect(112);
    assert.equal(state.connected, true);
    assert.equal(state.connectMs, 12);
  });

  it('counts a finished request once', () => {
    const { state } = fresh();
    assert.equal(state.finishRequest(), true);
    assert.equal(state.requestsFinished, 1);
    assert.equal(state.finishRequest(), false);
    assert.equal(state.requestsFinished, 1);
  });

  it('the Keep-Alive hint sets the server timeout in ms and the requests left', () => {
    const { state } = fresh();
    state.hint({ timeout: 5, max: 2 });
    assert.equal(state.serverTimeout, 5000);
    assert.equal(state.requestsLeft, 2);
    state.activate();
    assert.equal(state.requestsLeft, 1);
    state.hint({ max: 7 });
    assert.equal(state.serverTimeout, undefined);
    assert.equal(state.requestsLeft, 7);
    state.hint(null);
    assert.equal(state.serverTimeout, undefined);
    assert.equal(state.requestsLeft, 7);
  });

  it('a hand-over to a queued request that was aborted is given back', () => {
    const { state } = fresh();
    state.hint({ max: 5 });
    const req = {};
    state.handTo(req, 900, 64);
    state.activate();
    assert.equal(state.handedTo, req);
    assert.equal(state.idleBeforeReuse, 0);
    assert.equal(state.requestStartedAt, 900, 'the request got the socket then');
    assert.equal(state.bytesReadWhenFreed, 64, 'bytes read from here on are its response');
    assert.equal(state.requests, 2);
    assert.equal(state.requestsLeft, 4);
    state.handBack();
    assert.equal(state.requests, 1);
    assert.equal(state.requestsLeft, 5);
  });

  it('freed after a hand-over: given back only when the request it was handed to never ran', () => {
    const previous = { res: {} };
    const queued = { res: null };
    const cases = [
      // Node 18-22: core frees it again with the previous request attached.
      { attached: previous, givenBack: true },
      // Node 24+: the aborted request, attached, has no response.
      { attached: queued, givenBack: true },
      // The queued request ran and finished: its response is there.
      { attached: { res: {} }, handedTo: 'attached', givenBack: false },
    ];
    for (const { attached, handedTo, givenBack } of cases) {
      const { state } = fresh();
      state.hint({ max: 5 });
      state.handTo(handedTo === 'attached' ? attached : queued, 900, 64);
      state.activate();
      state.freedAfterHandoff(attached);
      assert.equal(state.handedTo, null);
      assert.equal(state.requests, givenBack ? 1 : 2);
      assert.equal(state.requestsLeft, givenBack ? 5 : 4);
    }
  });

  it('a probe is idle until its bound from the time it entered the pool', () => {
    const { state } = fresh();
    state.free(1000, 1300, 0);
    assert.equal(state.startProbe(4000), 5000);
    assert.equal(state.phase, PHASES.PROBE);
    assert.equal(state.idle, true);
  });

  it('markClosing() records the first reason, who closed it, and whether it was idle', () => {
    const { state } = fresh();
    state.free(10, 20, 0);
    state.markClosing('free-timeout');
    state.markClosing('destroy');
    assert.equal(state.phase, PHASES.CLOSING);
    assert.equal(state.closeReason, 'free-timeout');
    assert.equal(state.closedBy, 'agent');
    assert.equal(state.idle, true);
    state.closedByServer();
    assert.equal(state.closedBy, 'agent');

    const active = fresh().state;
    active.markClosing('not-kept');
    assert.equal(active.idle, false);
  });

  it('a server close is told apart from learning from it', () => {
    const { state } = fresh();
    state.closedByServer();
    assert.equal(state.closedBy, 'server');
    assert.equal(state.learnedFrom, false);
  });

  it('an upgrade takes the socket from the agent with its reason', () => {
    const { state } = fresh();
    state.upgrade('upgrade');
    assert.equal(state.phase, PHASES.UPGRADED);
    assert.equal(state.closeReason, 'upgrade');
    assert.equal(state.idle, false);
  });

  it('every write is a method: the marks core and the agent set on it', () => {
    const { state } = fresh();
    state.connectedBefore();
    assert.equal(state.connected, true);
    assert.equal(state.connectMs, 0);
    state.standInForCore(true);
    assert.equal(state.coreListens, true);
    state.coreLeft();
    assert.equal(state.coreListens, false);
    state.errorsToCore();
    assert.equal(state.errorsOff, true);
    state.errorsBack();
    assert.equal(state.errorsOff, false);
    state.markErrored();
    state.markLearnedFrom();
    assert.deepEqual([state.errored, state.learnedFrom], [true, true]);
    state.givePlaceUp();
    assert.deepEqual([state.placeGivenUp, state.removed], [true, true]);
    state.followHost('example.test');
    assert.equal(state.dnsHost, 'example.test');
    state.limitBy('hint');
    state.setFreeDeadline(500);
    assert.deepEqual([state.limitedBy, state.freeDeadline], ['hint', 500]);
    state.setRequests(5);
    state.setRequestsFinished(4);
    assert.deepEqual([state.requests, state.requestsFinished], [5, 4]);
  });

  it('tells the reuse event how it was last freed, once', () => {
    const { state } = fresh();
    assert.equal(state.takeFreedObserved(), 'handed');
    state.freedSeen(true);
    assert.equal(state.takeFreedObserved(), 'observed');
    assert.equal(state.takeFreedObserved(), 'handed');
    state.freedSeen(false);
    assert.equal(state.takeFreedObserved(), 'unobserved');
  });

  it('reaches its agent through its owner, the one hop of its listeners', () => {
    const { state } = fresh();
    assert.equal(state.owner, owner);
    assert.equal(state.agent, owner.agent);
  });
});
