'use strict';

// The learning rules without sockets: the counting of server_limits.js, one
// test a row of its table of states and transitions; the decisions of
// free_timeout.js; and the learning engine every transport and the pool
// model call (learning_engine.js). test/learning-properties.test.js drives
// the same engine through whole rhythms.
const assert = require('node:assert/strict');
const {
  ServerLimits, Evidence, agree, TUNING, STATES,
} = require('../lib/policy/server_limits');
const { LearningEngine } = require('../lib/policy/learning_engine');
const {
  idleAllowance, atDeadline, learnedMargin, probeBound,
} = require('../lib/policy/free_timeout');

const A = 'a:1:';
const B = 'b:2:';

// A close after `idleMs` idle at `now`; returns the outcome (null: ignored).
function close(limits, origin, idleMs, now, extra = {}) {
  return limits.died(origin, { idleMs, now, ...extra })?.outcome ?? null;
}

// `n` reuses after `idleMs` idle that got their response.
function survive(limits, origin, idleMs, n = 1) {
  let last = null;
  for (let i = 0; i < n; i++) last = limits.survived(origin, idleMs);
  return last;
}

const stateOf = (limits, origin) => limits.peek(origin)?.state ?? STATES.UNKNOWN;
const limitOf = (limits, origin) => limits.limitOf(origin);

// A tentative limit at `ms`, from one close nothing contradicts.
function tentativeAt(ms, origin = A) {
  const limits = new ServerLimits();
  close(limits, origin, ms, 10000);
  return limits;
}

// A confirmed limit at `ms`: a close, then its probe's two verdicts.
function confirmedAt(ms, origin = A) {
  const limits = tentativeAt(ms, origin);
  close(limits, origin, ms, 20000, { probe: true });
  close(limits, origin, ms, 30000, { probe: true });
  return limits;
}

describe('the learning rules: one test a row of the table (server_limits.js)', () => {
  it('knows nothing at first', () => {
    const limits = new ServerLimits();
    assert.equal(limits.size, 0);
    assert.equal(stateOf(limits, A), STATES.UNKNOWN);
    assert.deepEqual(limits.toJSON(), {});
  });

  it('any, a close at t where survivals at t or longer dominate: refused (a fault)', () => {
    const limits = new ServerLimits();
    survive(limits, A, 200, 9);
    const refused = limits.died(A, { idleMs: 201, now: 1000, collision: true });
    assert.equal(refused.outcome, 'refused');
    assert.match(refused.why, /a request failed after 201 ms idle, where reuses survived as long 9 times and sockets died 1 time: a fault/);
    assert.equal(stateOf(limits, A), STATES.UNKNOWN);
  });

  it('any, a close below HINT_TRUST of the announced timeout: refused, however the counts stand', () => {
    const limits = new ServerLimits();
    const refused = limits.died(A, { idleMs: 375, now: 2400, hinted: 5000 });
    assert.equal(refused.outcome, 'refused');
    assert.match(refused.why, /far below the announced timeout of 5000 ms: a fault/);
    assert.equal(close(limits, B, 4000, 2400, { hinted: 5000 }), 'learned', 'a close near the hint is news');
  });

  it('any, closes agree far below the hint, with no reuse as long: refused, however many', () => {
    // Faults at one phase of a steady rhythm agree: a server announcing
    // 2 s, reset or restarted 130 ms into a 200 ms rhythm, none reused between.
    const limits = new ServerLimits();
    for (const [now, collision] of [[400, true], [1000, false], [1600, true], [2200, false], [2800, false]]) {
      assert.equal(close(limits, A, 130, now, { hinted: 2000, collision }), 'refused');
    }
    assert.equal(limitOf(limits, A), undefined);
    assert.equal(limits.peek(A).evidence.diedNear(130) > 2, true, 'counted all the same');
    assert.equal(close(limits, B, 1500, 1000, { hinted: 2000 }), 'learned', 'from HINT_TRUST of the hint on, as any close');
  });

  it('any, a close sooner than MIN_LIMIT_MS after a response: refused, however many agree', () => {
    // A restart or a reset a few ms after a response, at a rhythm faster
    // than a TLS handshake: a limit there would send each request to a new
    // connection while its probe is out.
    const limits = new ServerLimits();
    const refused = limits.died(A, { idleMs: 17, now: 100, collision: true });
    assert.deepEqual(refused, { outcome: 'refused', why: 'a request failed after 17 ms idle, sooner than any server\'s idle limit: a fault' });
    for (const now of [200, 300, 400]) assert.equal(close(limits, A, TUNING.MIN_LIMIT_MS - 1, now), 'refused');
    assert.equal(limitOf(limits, A), undefined);
    assert.equal(limits.peek(A).evidence.diedNear(TUNING.MIN_LIMIT_MS - 1) > 2, true, 'counted all the same');
    assert.equal(close(limits, B, TUNING.MIN_LIMIT_MS, 100), 'learned', 'from MIN_LIMIT_MS on, as any close');
  });

  it('any, a reuse that survived well past t weighs FAR_SURVIVAL_WEIGHT reuses against a close at t', () => {
    // A deploy closes a socket idle 160 ms at a 250 ms rhythm, where one
    // reuse survived 240 ms: no limit at 160 ms allows that.
    const far = new ServerLimits();
    survive(far, A, 240);
    const refused = far.died(A, { idleMs: 160, now: 1000 });
    assert.equal(refused.outcome, 'refused');
    assert.match(refused.why, /where reuses survived as long 2 times and sockets died 1 time: a fault/);
    // A reuse as long, timer jitter aside, may have won the race across a limit at t.
    const near = new ServerLimits();
    survive(near, A, 157);
    assert.equal(close(near, A, 160, 1000), 'learned');
    // One a little longer, even within agreement, shows the server allowed more:
    // a limit's close comes no sooner than the longest reuse it let through.
    const longer = new ServerLimits();
    survive(longer, A, 168);
    const outlived = longer.died(A, { idleMs: 160, now: 1000 });
    assert.equal(outlived.outcome, 'refused');
    assert.match(outlived.why, /survived as long 2 times/);
    // A request that met the close (a collision) is judged as before: the reuse may have won the race.
    const collided = new ServerLimits();
    survive(collided, A, 168);
    assert.equal(close(collided, A, 160, 1000, { collision: true }), 'learned');
  });

  it('unknown, a close that deaths dominate: a tentative limit (a probe will tell)', () => {
    const limits = new ServerLimits();
    const learned = limits.died(A, { idleMs: 900.4, now: 1000, collision: true });
    assert.deepEqual(learned, { outcome: 'learned', why: 'a request failed after 900 ms idle (tentative: a probe will tell)' });
    assert.equal(stateOf(limits, A), STATES.TENTATIVE);
    assert.equal(limits.peek(A).fromCollision, true);
  });

  it('the server closing an idle socket at t is weighed against survivals as long or longer; a collision at t also against a little shorter ones', () => {
    // A rhythm spread about a silent server's limit: reuses a little short
    // of it survive, those past it find the socket closed. Its limit allows
    // every shorter idle time, so those reuses say nothing against the
    // server's close; a reset at a steady rhythm has reuses on both sides.
    const closes = new ServerLimits();
    survive(closes, A, 960, 3);
    assert.equal(close(closes, A, 1001, 1000), 'learned');
    const collisions = new ServerLimits();
    survive(collisions, A, 960, 3);
    assert.equal(close(collisions, A, 1001, 1000, { collision: true }), 'refused');
    const jitter = new ServerLimits();
    survive(jitter, A, 998, 3);
    assert.equal(close(jitter, A, 1001, 1000), 'refused', 'a survival within timer jitter of the close still counts');
  });

  it('a race: as many reuses die at the idle time as survive there, and the first close is believed', () => {
    const limits = new ServerLimits();
    survive(limits, A, 495);
    assert.equal(close(limits, A, 495, 1000, { collision: true }), 'learned');
  });

  it('tentative L, its probe dies about L: one trial; the second confirms', () => {
    const limits = tentativeAt(5004);
    assert.equal(close(limits, A, 4998, 20000, { probe: true }), 'held');
    assert.equal(stateOf(limits, A), STATES.TENTATIVE);
    assert.equal(close(limits, A, 5001, 30000, { probe: true }), 'confirmed');
    assert.equal(stateOf(limits, A), STATES.CONFIRMED);
    assert.equal(limitOf(limits, A), 5001);
  });

  it('tentative L, a socket that idled as long as L dies there: a trial, as a probe', () => {
    const limits = tentativeAt(1000);
    assert.equal(close(limits, A, 1010, 20000), 'held');
    assert.equal(close(limits, A, 1005, 30000), 'confirmed');
  });

  it('tentative L, another close a little earlier is as likely another fault: it only lowers L', () => {
    const limits = tentativeAt(200);
    assert.equal(close(limits, A, 190, 20000), 'lowered');
    assert.equal(stateOf(limits, A), STATES.TENTATIVE);
    assert.equal(limitOf(limits, A), 190);
  });

  it('tentative L, a close well below L that deaths dominate: lowered, still tentative', () => {
    const limits = tentativeAt(1000);
    assert.equal(close(limits, A, 400, 20000), 'lowered');
    assert.equal(limitOf(limits, A), 400);
    assert.equal(stateOf(limits, A), STATES.TENTATIVE);
  });

  it('confirmed L, one close below L: held, counted, not believed', () => {
    const limits = confirmedAt(5000);
    assert.equal(close(limits, A, 1200, 40000), 'held');
    assert.equal(limitOf(limits, A), 5000);
  });

  it('confirmed L, closes agree below L and outweigh the survivals: lowered', () => {
    const limits = confirmedAt(5000);
    close(limits, A, 1200, 40000);
    assert.equal(close(limits, A, 1190, 50000), 'lowered');
    assert.equal(limitOf(limits, A), 1190);
    assert.equal(stateOf(limits, A), STATES.CONFIRMED);
  });

  it('confirmed L, closes agree below L but reuses survived as long: refused', () => {
    const limits = confirmedAt(5000);
    survive(limits, A, 1200, 6);
    close(limits, A, 1200, 40000);
    assert.equal(close(limits, A, 1190, 50000), 'refused');
    assert.equal(limitOf(limits, A), 5000);
  });

  it('confirmed L, a close later than L while the closes at L still stand: held (one late close)', () => {
    const limits = confirmedAt(992);
    assert.equal(close(limits, A, 1254, 40000), 'held');
    assert.equal(limitOf(limits, A), 992);
  });

  it('confirmed L, its probe closed later than L: raised, tentative, however the closes at L stand', () => {
    // Resets at one phase of a 67 ms rhythm confirmed 67 ms; the probe,
    // kept past it, lived until the server's true limit closed it.
    const limits = confirmedAt(67);
    assert.equal(close(limits, A, 100, 40000, { probe: true }), 'raised');
    assert.equal(limitOf(limits, A), 100);
    assert.equal(stateOf(limits, A), STATES.TENTATIVE);
  });

  it('limit L, a later close (tentative L, or L no longer standing): raised, tentative', () => {
    const limits = tentativeAt(200);
    assert.equal(close(limits, A, 300, 15000, { probe: true }), 'raised', 'a tentative limit: the server kept its probe longer');
    survive(limits, A, 305, 3); // reuses about as long: the close there was a fault
    assert.equal(close(limits, A, 5000, 20000), 'raised');
    assert.equal(limitOf(limits, A), 5000);
    assert.equal(stateOf(limits, A), STATES.TENTATIVE);
  });

  it('any, closes at the same idle time within BURST_WINDOW: one event, never a new limit', () => {
    const limits = new ServerLimits();
    assert.equal(close(limits, A, 1010, 50000), 'learned');
    assert.equal(close(limits, A, 1000, 50001), 'burst');
    assert.equal(close(limits, A, 1005, 50002), 'burst');
    assert.equal(limitOf(limits, A), undefined, 'several at once may be a restart');
    assert.equal(close(limits, A, 1002, 60000), 'learned', 'the burst counted as one close: a later one is a first trial');
  });

  it('tentative L, a burst of closes at L that idled as long: one trial', () => {
    const limits = tentativeAt(1000);
    close(limits, A, 1000, 20000, { probe: true });
    assert.equal(close(limits, A, 1003, 30000), 'confirmed');
    const other = tentativeAt(1000, B);
    close(other, B, 1001, 20000, { probe: true });
    close(other, B, 1000, 30000);
    assert.equal(close(other, B, 1002, 30001), 'confirmed', 'the burst undoes its first close, then weighs itself');
  });

  it('any, closes at differing idle times together: a restart, the first undone', () => {
    const limits = new ServerLimits();
    const t = 100000;
    assert.equal(close(limits, A, 200, t), 'learned');
    assert.equal(close(limits, A, 900, t + 3), 'restart');
    assert.equal(close(limits, A, 1600, t + 6), 'restart');
    assert.equal(limitOf(limits, A), undefined);
    assert.deepEqual(limits.peek(A).evidence.toJSON().filter((row) => row.died > 0), [], 'nothing counted');
    assert.equal(close(limits, A, 5000, t + 10000), 'learned', 'a close well after the burst is news again');
  });

  it('any, a close and a request in flight failing together: a restart, in either order', () => {
    const limits = new ServerLimits();
    assert.equal(close(limits, A, 400, 5000), 'learned');
    assert.equal(limits.fault(A, 5002).outcome, 'restart');
    assert.equal(limitOf(limits, A), undefined);
    assert.equal(limits.fault(B, 9000).outcome, 'restart');
    assert.equal(close(limits, B, 400, 9001), 'restart');
    assert.equal(limitOf(limits, B), undefined);
  });

  it('a restart leaves a limit learned before it as it was', () => {
    const limits = confirmedAt(5000);
    close(limits, A, 300, 40000);
    close(limits, A, 2000, 40000 + TUNING.BURST_WINDOW);
    assert.equal(limitOf(limits, A), 5000);
    assert.equal(stateOf(limits, A), STATES.CONFIRMED);
  });

  it('limit L, a reuse answered well past L: refuted (within agreement, L stands)', () => {
    const limits = tentativeAt(400);
    assert.equal(limits.survived(A, 420), null);
    assert.equal(limits.survived(A, 300), null);
    const refuted = limits.survived(A, 1000);
    assert.deepEqual(refuted, { outcome: 'refuted', why: 'a reuse after 1000 ms idle got its response' });
    assert.equal(stateOf(limits, A), STATES.UNKNOWN);
  });

  it('limit L, its probe still open past L: refuted', () => {
    const limits = tentativeAt(400);
    assert.match(limits.survived(A, 600, true, 5).why, /probe was still open after 600 ms/);
    assert.equal(limitOf(limits, A), undefined);
    assert.equal(limits.survived(B, 600, true, 5), null, 'no limit: nothing to refute');
  });

  it('limit L, its trial lapsed (undici): refuted, nothing counted; a socket then dying at L confirms it', () => {
    const limits = tentativeAt(400);
    assert.equal(limits.lapse(A).outcome, 'refuted');
    assert.equal(limits.lapse(A), null, 'no limit: nothing lapses');
    assert.equal(limits.peek(A).evidence.toJSON().reduce((n, row) => n + row.survived, 0), 0);
    assert.equal(close(limits, A, 405, 20000), 'confirmed');
  });

  it('unknown, L lapsed: a reuse answered past it, beyond agreement, ends its doubt; a close at L then is weighed as any', () => {
    const limits = tentativeAt(400);
    limits.lapse(A);
    assert.equal(limits.doubted(A), 400, 'in doubt: a request that cannot be sent again keeps to it');
    assert.equal(limits.survived(A, 420), null);
    assert.equal(limits.doubted(A), 400, 'within agreement: still in doubt');
    assert.equal(limits.survived(A, 600), null, 'no limit in force: no verdict');
    assert.equal(limits.doubted(A), undefined);
    // A close at L now is weighed as any: not a confirmation, and refused, since reuses outlived it.
    assert.equal(close(limits, A, 405, 20000), 'refused');
  });

  it('unknown, a tentative L lapsed: DOUBT_KEPT_OFF requests kept off sockets past it end its doubt; a close at L still confirms it', () => {
    const limits = tentativeAt(400);
    limits.lapse(A);
    for (let i = 1; i < TUNING.DOUBT_KEPT_OFF; i++) assert.equal(limits.keptOff(A), false);
    assert.equal(limits.doubted(A), 400);
    assert.equal(limits.keptOff(A), true, 'the last one ends it');
    assert.equal(limits.doubted(A), undefined);
    assert.equal(limits.keptOff(A), false, 'once');
    assert.equal(close(limits, A, 405, 20000), 'confirmed', 'the lapsed limit is still remembered');
  });

  it('unknown, a confirmed L lapsed: in doubt however many requests were kept off', () => {
    const limits = confirmedAt(400);
    limits.lapse(A);
    for (let i = 0; i < 2 * TUNING.DOUBT_KEPT_OFF; i++) assert.equal(limits.keptOff(A), false);
    assert.equal(limits.doubted(A), 400);
    assert.equal(limits.keptOff(B), false, 'no record: nothing to count');
  });

  it('limit L in force: in doubt for a request that cannot be sent again, whatever it caps', () => {
    const limits = new ServerLimits();
    assert.equal(limits.doubted(A), undefined);
    close(limits, A, 400, 1000, { collision: true });
    assert.equal(limits.doubted(A), 400);
    assert.equal(limits.keptOff(A), false, 'a limit in force: nothing counted');
  });

  it('a close within a millisecond of its response, or not a number, is ignored', () => {
    const limits = new ServerLimits();
    assert.equal(close(limits, A, 0.5, 1000), null);
    assert.equal(close(limits, A, -3595000, 1000), null);
    assert.equal(close(limits, A, NaN, 1000), null);
    assert.equal(limits.survived(A, 0.2), null);
    assert.deepEqual(limits.toJSON(), {});
  });

  it('closes of other origins do not make a burst', () => {
    const limits = new ServerLimits();
    close(limits, A, 200, 1000);
    close(limits, B, 900, 1001);
    assert.deepEqual(limits.toJSON(), { [A]: 200, [B]: 900 });
  });

  it('agreement: within max(AGREE_MIN_MS, 10%)', () => {
    assert.equal(agree(100, 109), true);
    assert.equal(agree(100, 112), false);
    assert.equal(agree(10, 15), true);
    assert.equal(agree(10, 16), false);
    assert.equal(agree(5000, 5499), true);
    assert.equal(agree(5000, 5600), false);
  });

  it('never holds more than its capacity; a close counts as use, a survival does not', () => {
    const limits = new ServerLimits(3);
    for (let i = 0; i < 10; i++) {
      close(limits, `host${i}:80:`, 1000 + i, i * 1000);
      assert.ok(limits.size <= 3, `size ${limits.size}`);
    }
    assert.deepEqual(limits.toJSON(), { 'host7:80:': 1007, 'host8:80:': 1008, 'host9:80:': 1009 });
    close(limits, 'host7:80:', 1007, 50000, { probe: true });
    close(limits, 'new:1:', 500, 99000); // drops host8, the least recently used
    assert.deepEqual(Object.keys(limits.toJSON()).sort(), ['host7:80:', 'host9:80:', 'new:1:']);
  });

  it('has a default capacity in the hundreds', () => {
    const limits = new ServerLimits();
    for (let i = 0; i < 5000; i++) close(limits, `host${i}:80:`, i + 1, i * 1000);
    assert.ok(limits.size >= 100 && limits.size < 5000, `size ${limits.size}`);
    assert.equal(limitOf(limits, 'host4999:80:'), 5000);
    assert.equal(limits.peek('host0:80:'), undefined);
  });
});

describe('the evidence: a bounded, decaying histogram', () => {
  it('counts survivals and deaths per idle time, shortest first', () => {
    const evidence = new Evidence();
    evidence.survived(200);
    evidence.survived(201);
    evidence.died(5000);
    assert.deepEqual(evidence.toJSON(), [{ idleMs: 201, survived: 2, died: 0 }, { idleMs: 5000, survived: 0, died: 1 }]);
    assert.deepEqual(evidence.around(200), [2, 0]);
    assert.deepEqual(evidence.around(5000), [0, 1]);
  });

  it('keeps at most MAX_BUCKETS idle times and a total weight of at most HISTORY', () => {
    const evidence = new Evidence();
    for (let i = 1; i < 5000; i++) evidence.survived(i * 7);
    const rows = evidence.toJSON();
    assert.ok(rows.length <= TUNING.MAX_BUCKETS, `${rows.length} rows`);
    const total = rows.reduce((n, row) => n + row.survived + row.died, 0);
    assert.ok(total <= TUNING.HISTORY + 1, `total ${total}`);
  });

  it('every close weighed fades the counts before it', () => {
    const limits = new ServerLimits();
    survive(limits, A, 200, 10);
    close(limits, A, 210, 1000);
    const [row] = limits.peek(A).evidence.toJSON();
    assert.equal(row.survived, 10 * TUNING.DECAY);
  });
});

describe('the learning engine (learning_engine.js)', () => {
  it('a close of our own is never evidence', () => {
    const engine = new LearningEngine(true);
    assert.equal(engine.ownClose(A), null);
    assert.deepEqual(engine.toJSON(), {});
  });

  it('learnServerTimeout: false: facts teach nothing', () => {
    const engine = new LearningEngine(false);
    assert.equal(engine.enabled, false);
    assert.equal(engine.closedIdle(A, 400, 1000), null);
    assert.equal(engine.collided(A, 400, 2000), null);
    assert.equal(engine.reused(A, 400), null);
    assert.equal(engine.failedInFlight(A, 3000), null);
    assert.deepEqual(engine.freeTimeout(A, 4000, undefined, 1000), { timeout: 4000, limitedBy: null });
    assert.deepEqual(engine.evidenceOf(A), []);
  });

  it('a verdict says what is held now, how sure, why, and whether free sockets must be capped now', () => {
    const engine = new LearningEngine(true);
    const learned = engine.closedIdle(A, 1000, 1000);
    assert.deepEqual(learned, {
      outcome: 'learned', why: 'the server closed a socket after 1000 ms idle (tentative: a probe will tell)', ms: 1000, confidence: 'tentative', tighten: false,
    });
    engine.startProbe(A, 'probe-1');
    assert.equal(engine.closedIdle(A, 1001, 5000, undefined, 'probe-1').outcome, 'held');
    assert.equal(engine.probeOf(A), undefined, 'the probe closed: it is one no longer');
    engine.startProbe(A, 'probe-2');
    const confirmed = engine.closedIdle(A, 999, 9000, undefined, 'probe-2');
    assert.deepEqual([confirmed.outcome, confirmed.confidence, confirmed.tighten], ['confirmed', 'confirmed', true]);
    assert.deepEqual(engine.evidenceOf(A).map((row) => row.idleMs), [999]);
  });

  it('a lone request failing in flight changes nothing and says nothing; with a close, undoes it', () => {
    const engine = new LearningEngine(true);
    assert.equal(engine.failedInFlight(A, 1000), null);
    engine.closedIdle(B, 400, 5000);
    assert.equal(engine.failedInFlight(B, 5001).outcome, 'restart');
    assert.equal(engine.limitOf(B), undefined);
  });

  it('a tentative limit a collision set caps only its probe while the probe is out', () => {
    const engine = new LearningEngine(true);
    engine.collided(A, 400, 1000);
    assert.deepEqual(engine.freeTimeout(A, 4000, undefined, 1000), { timeout: 340, limitedBy: 'learned' });
    assert.deepEqual(engine.atDeadline(A, 4000, undefined, 1000, 340), { action: 'probe', bound: 600 });
    engine.startProbe(A, 'p');
    assert.deepEqual(engine.freeTimeout(A, 4000, undefined, 1000), { timeout: 4000, limitedBy: null });
    assert.deepEqual(engine.atDeadline(A, 4000, undefined, 1000, 340), { action: 'wait', timeout: 4000 });
    assert.deepEqual(engine.probeOutlived(A, 'other', 600), { wasProbe: false, verdict: null });
    const { wasProbe, verdict } = engine.probeOutlived(A, 'p', 600);
    assert.equal(wasProbe, true);
    assert.equal(verdict.outcome, 'refuted');
    assert.deepEqual(engine.takeProbes(), []);
  });

  it('a request that cannot be sent again keeps to every limit in doubt (the undici transport)', () => {
    const engine = new LearningEngine(true);
    assert.equal(engine.strictFreeTimeout(A, 4000, undefined, 1000), Infinity);
    engine.collided(A, 400, 1000);
    engine.startProbe(A, 'p');
    assert.deepEqual(engine.freeTimeout(A, 4000, undefined, 1000), { timeout: 4000, limitedBy: null }, 'a collision\'s limit on trial caps only its probe');
    assert.equal(engine.strictFreeTimeout(A, 4000, undefined, 1000), 340, '... and every socket for such a request');
    assert.equal(engine.strictFreeTimeout(A, 4000, 300, 100), 200, 'a hint lower still decides');
    assert.equal(engine.trialLapsed(A, 'p').outcome, 'refuted');
    assert.equal(engine.limitOf(A), undefined);
    assert.equal(engine.strictFreeTimeout(A, 4000, undefined, 1000), 340, 'lapsed: still in doubt');
    let ended = false;
    for (let i = 0; i < TUNING.DOUBT_KEPT_OFF; i++) ended = engine.keptOff(A);
    assert.equal(ended, true);
    assert.equal(engine.strictFreeTimeout(A, 4000, undefined, 1000), Infinity);
    const off = new LearningEngine(false);
    off.collided(A, 400, 1000);
    assert.equal(off.strictFreeTimeout(A, 4000, undefined, 1000), Infinity);
    assert.equal(off.keptOff(A), false);
  });

  it('a trial of time lapses with nothing counted (the undici transport)', () => {
    const engine = new LearningEngine(true);
    engine.closedIdle(A, 400, 1000);
    const trial = { from: 1000, end: 1600 };
    engine.startProbe(A, trial);
    assert.deepEqual([...engine.probes()], [trial]);
    assert.equal(engine.trialLapsed(A, trial).outcome, 'refuted');
    assert.equal(engine.trialLapsed(A, trial), null, 'over already');
  });
});

describe('idle allowance and margins', () => {
  it('the margin grows with the learned limit, so a rhythm at 80% of it keeps reusing', () => {
    assert.equal(learnedMargin(300, 1000), 45);
    assert.equal(learnedMargin(2500, 1000), 375, 'the issue\'s margin band: 2 s requests, a 2.5 s limit');
    assert.equal(learnedMargin(8000, 1000), 1000, 'never more than serverTimeoutMargin');
    assert.equal(learnedMargin(100, 1000), 18, 'a floor for timer lateness and round trips');
    assert.equal(learnedMargin(1000, 100), 100);
    for (const limit of [20, 50, 100, 300, 1000, 2500, 5000, 6000]) {
      const kept = idleAllowance(Infinity, undefined, limit, 1000).timeout;
      assert.ok(kept >= 0.8 * limit, `${limit} ms keeps ${kept} ms`);
    }
    assert.deepEqual(idleAllowance(4000, undefined, 300, 1000), { timeout: 255, limitedBy: 'learned' });
  });

  it('a hinted limit keeps the whole margin (as Node\'s agentKeepAliveTimeoutBuffer)', () => {
    assert.deepEqual(idleAllowance(4000, 1000, undefined, 1000), { timeout: 0, limitedBy: 'hint' });
    assert.deepEqual(idleAllowance(4000, 2000, undefined, 500), { timeout: 1500, limitedBy: 'hint' });
    assert.deepEqual(idleAllowance(4000, 5000, 1000, 1000), { timeout: 850, limitedBy: 'learned' });
  });

  it('the smallest limit wins; the learned limit is named only when it decides', () => {
    assert.deepEqual(idleAllowance(4000, undefined, undefined, 1000), { timeout: 4000, limitedBy: null });
    assert.deepEqual(idleAllowance(1000, undefined, 9000, 1000), { timeout: 1000, limitedBy: null });
  });

  it('a probe waits half the limit more, tentative or confirmed', () => {
    assert.equal(probeBound(200), 300);
    assert.equal(probeBound(20), 30);
    assert.equal(probeBound(4), 9, 'at least a few ms beyond the limit');
    assert.equal(probeBound(3000), 4500, 'beyond the free timeout: a trial cut short would show nothing');
  });

  it('a confirmed limit\'s probe has the same bound: a probe open past it refutes a limit faults confirmed', () => {
    const limits = confirmedAt(63);
    const record = limits.peek(A);
    assert.deepEqual(atDeadline(4000, undefined, record, false, 1000, 52), { action: 'probe', bound: probeBound(63) });
    assert.equal(limits.survived(A, probeBound(63), true, TUNING.TRIAL_EXTRA_MIN_MS).outcome, 'refuted');
    assert.equal(limitOf(limits, A), undefined);
  });
});

describe('a free socket at its deadline', () => {
  const limits = new ServerLimits();
  limits.died(A, { idleMs: 400, now: 1000 });
  const tentative = limits.peek(A);

  it('expires when nothing learned decided it', () => {
    assert.deepEqual(atDeadline(4000, undefined, undefined, false, 1000, 4000), { action: 'expire' });
  });

  it('becomes the probe when the learned limit decided it and no probe is out', () => {
    assert.deepEqual(atDeadline(4000, undefined, tentative, false, 1000, 340), { action: 'probe', bound: 600 });
    assert.deepEqual(atDeadline(4000, undefined, tentative, true, 1000, 340), { action: 'expire' });
  });

  it('waits when the limit that set its deadline was forgotten since', () => {
    assert.deepEqual(atDeadline(4000, undefined, undefined, false, 1000, 300), { action: 'wait', timeout: 4000 });
    assert.deepEqual(atDeadline(4000, 2000, undefined, false, 1000, 300), { action: 'wait', timeout: 1000 });
  });
});
