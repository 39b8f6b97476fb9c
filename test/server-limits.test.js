'use strict';

// The rules of lib/server_limits.js, without sockets: given facts (idle
// times at which a server closed a socket, when, the hint, the longest idle
// time seen alive), what the agent learns, and how long a socket may then
// stay idle. The pool model (test/learning-properties.test.js) drives the
// same functions through whole rhythms.
const assert = require('node:assert/strict');
const { ServerLimits, agree, BURST_WINDOW } = require('../lib/policy/server_limits');
const {
  idleAllowance, atDeadline, learnedMargin, probeBound,
} = require('../lib/policy/free_timeout');

const A = 'a:1:';
const B = 'b:2:';

// observe() with a fact; returns the outcome.
function see(limits, origin, idleMs, now, extra = {}) {
  return limits.observe(origin, { idleMs, now, ...extra }).outcome;
}

const limitOf = (limits, origin) => limits.limitOf(origin);
const confirmed = (limits, origin) => limits.peek(origin)?.confirmed ?? false;

describe('ServerLimits', () => {
  it('knows nothing at first', () => {
    const limits = new ServerLimits();
    assert.equal(limits.size, 0);
    assert.equal(limits.get(A), undefined);
    assert.deepEqual(limits.toJSON(), {});
  });

  it('a first close sets a tentative limit; a second that agrees confirms it', () => {
    const limits = new ServerLimits();
    assert.equal(see(limits, A, 5004, 10000), 'learned');
    assert.equal(limitOf(limits, A), 5004);
    assert.equal(confirmed(limits, A), false);
    assert.equal(see(limits, A, 4998, 20000), 'confirmed');
    assert.equal(limitOf(limits, A), 4998);
    assert.equal(confirmed(limits, A), true);
    assert.deepEqual(limits.toJSON(), { [A]: 4998 });
  });

  it('says why, in words', () => {
    const limits = new ServerLimits();
    const learned = limits.observe(A, { idleMs: 900.4, now: 1000, collision: true });
    assert.equal(learned.outcome, 'learned');
    assert.match(learned.why, /a request failed after 900 ms idle \(tentative\)/);
    const refused = limits.observe(B, { idleMs: 375, now: 1000, aliveMs: 1000.2 });
    assert.deepEqual(refused, { outcome: 'refused', why: 'contradicted by a reuse after 1000 ms', resetAlive: false });
  });

  it('a tentative limit gives way to a lower close', () => {
    const limits = new ServerLimits();
    see(limits, A, 1000, 10000);
    assert.equal(see(limits, A, 400, 20000), 'lowered');
    assert.equal(limitOf(limits, A), 400);
  });

  it('a single early close does not lower a confirmed limit; a second that agrees does', () => {
    const limits = new ServerLimits();
    see(limits, A, 5000, 10000);
    see(limits, A, 5010, 20000);
    assert.equal(see(limits, A, 200, 30000), 'held');
    assert.equal(limitOf(limits, A), 5000, 'one early close: the limit stays');
    assert.equal(see(limits, A, 1200, 40000), 'held', 'another that disagrees replaces the candidate');
    assert.equal(limitOf(limits, A), 5000);
    assert.equal(see(limits, A, 1190, 50000), 'lowered');
    assert.equal(limitOf(limits, A), 1190);
    assert.equal(confirmed(limits, A), true);
  });

  it('a single collision does not lower a confirmed limit either (it may be a reset)', () => {
    const limits = new ServerLimits();
    see(limits, A, 5000, 10000);
    see(limits, A, 5000, 20000);
    assert.equal(see(limits, A, 1200, 30000, { collision: true }), 'held');
    assert.equal(limitOf(limits, A), 5000);
    // A collision after longer idle than the held close: a server that
    // drops idle connections silently fails every request past its limit.
    assert.equal(see(limits, A, 1600, 40000, { collision: true }), 'lowered');
    assert.equal(limitOf(limits, A), 1200);
  });

  it('a close later than the limit raises it: the server kept the socket that long', () => {
    const limits = new ServerLimits();
    see(limits, A, 200, 10000);
    assert.equal(see(limits, A, 5000, 20000), 'raised');
    assert.equal(limitOf(limits, A), 5000);
    assert.equal(confirmed(limits, A), false);
  });

  it('agreement: within max(20 ms, 10%)', () => {
    assert.equal(agree(100, 119), true);
    assert.equal(agree(100, 121), false);
    assert.equal(agree(300, 333), true);
    assert.equal(agree(300, 334), false);
    assert.equal(agree(5000, 5499), true);
    assert.equal(agree(5000, 5600), false);
  });

  describe('evidence against a close', () => {
    it('a close after no longer than a reuse that got its response is refused, and held', () => {
      const limits = new ServerLimits();
      assert.equal(see(limits, A, 375, 2400, { aliveMs: 1000 }), 'refused');
      assert.equal(limitOf(limits, A), undefined);
      // The same close again, at another moment: the server changed.
      const second = limits.observe(A, { idleMs: 380, now: 9000, aliveMs: 1000 });
      assert.equal(second.outcome, 'confirmed');
      assert.equal(second.resetAlive, true, 'the caller forgets what it saw alive');
      assert.equal(limitOf(limits, A), 375);
    });

    it('a close after longer than anything seen alive is news', () => {
      const limits = new ServerLimits();
      assert.equal(see(limits, A, 1200, 5000, { aliveMs: 1000 }), 'learned');
    });

    it('a collision about as long as a reuse seen alive is the race itself: taken', () => {
      const limits = new ServerLimits();
      assert.equal(see(limits, A, 990, 5000, { aliveMs: 1000, collision: true }), 'learned');
      assert.equal(see(limits, B, 949, 5000, { aliveMs: 1000, collision: true }), 'refused', 'more than 5% earlier');
    });

    it('a close before half the announced timeout is refused (Node\'s server honours its hint)', () => {
      const limits = new ServerLimits();
      const refused = limits.observe(A, { idleMs: 375, now: 2400, hinted: 5000 });
      assert.deepEqual([refused.outcome, refused.why], ['refused', 'far below the announced timeout of 5000 ms']);
      assert.equal(see(limits, B, 3000, 2400, { hinted: 5000 }), 'learned', 'a close near the hint is a limit');
    });

    it('a held close expires: one much later does not agree with it', () => {
      const limits = new ServerLimits();
      see(limits, A, 400, 1000, { aliveMs: 1000 });
      assert.equal(see(limits, A, 400, 1000 + 61000, { aliveMs: 1000 }), 'refused');
      assert.equal(limitOf(limits, A), undefined);
    });
  });

  describe('bursts', () => {
    it('closes at differing idle times together are a restart: forgotten, including the first', () => {
      const limits = new ServerLimits();
      const t = 100000;
      assert.equal(see(limits, A, 200, t), 'learned');
      assert.equal(see(limits, A, 900, t + 3), 'restart');
      assert.equal(see(limits, A, 1600, t + 6), 'restart');
      assert.equal(limits.get(A)?.limit, undefined);
      assert.deepEqual(limits.toJSON(), {});
      assert.equal(see(limits, A, 5000, t + 10000), 'learned', 'a close well after the burst is news again');
    });

    it('a close and a request in flight failing at the same moment are a restart', () => {
      const limits = new ServerLimits();
      assert.equal(see(limits, A, 400, 5000), 'learned');
      assert.equal(limits.fault(A, 5002).outcome, 'restart');
      assert.equal(limitOf(limits, A), undefined);
      // The other order too.
      assert.equal(limits.fault(B, 9000).outcome, 'restart');
      assert.equal(see(limits, B, 400, 9001), 'restart');
      assert.equal(limitOf(limits, B), undefined);
    });

    it('a restart leaves a limit learned before it as it was', () => {
      const limits = new ServerLimits();
      see(limits, A, 5000, 10000);
      see(limits, A, 5000, 20000);
      see(limits, A, 300, 30000);
      see(limits, A, 2000, 30000 + BURST_WINDOW);
      assert.equal(limitOf(limits, A), 5000);
      assert.equal(confirmed(limits, A), true);
      // The candidate was the restart's too: one more early close is held again.
      assert.equal(see(limits, A, 300, 90000), 'held');
    });

    it('closes at the same idle time together (sockets freed together) are held, not a limit', () => {
      const limits = new ServerLimits();
      assert.equal(see(limits, A, 1010, 50000), 'learned');
      assert.equal(see(limits, A, 1000, 50001), 'burst');
      assert.equal(see(limits, A, 1005, 50002), 'burst');
      assert.equal(limitOf(limits, A), undefined, 'several at once may be a restart');
      assert.equal(see(limits, A, 1002, 60000), 'confirmed', 'a later close that agrees');
      assert.equal(limitOf(limits, A), 1000);
    });

    it('closes of other origins do not make a burst', () => {
      const limits = new ServerLimits();
      see(limits, A, 200, 1000);
      see(limits, B, 900, 1001);
      assert.deepEqual(limits.toJSON(), { [A]: 200, [B]: 900 });
    });
  });

  describe('refuting a limit', () => {
    it('a reuse that got its response after longer than the limit refutes it; the limit is held', () => {
      const limits = new ServerLimits();
      see(limits, A, 400, 1000);
      assert.equal(limits.refute(A, 420, 2000), null, 'within agreement: the limit stands');
      assert.equal(limits.refute(A, 300, 2000), null);
      assert.equal(limits.refute(A, 1000, 2000).outcome, 'refuted');
      assert.equal(limitOf(limits, A), undefined);
      assert.equal(see(limits, A, 410, 3000), 'confirmed', 'a later close that agrees with the held limit');
    });

    it('a probe still open at its bound refutes the limit', () => {
      const limits = new ServerLimits();
      see(limits, A, 400, 1000);
      assert.match(limits.refute(A, 600, 2000, true).why, /probe was still open after 600 ms/);
      assert.equal(limitOf(limits, A), undefined);
      assert.equal(limits.refute(B, 600, 2000, true), null, 'no limit: nothing to refute');
    });
  });

  it('ignores idle times below 1 ms and non-numbers', () => {
    const limits = new ServerLimits();
    assert.equal(see(limits, A, 0.5, 1000), 'ignored');
    assert.equal(see(limits, A, -3595000, 1000), 'ignored');
    assert.equal(see(limits, A, NaN, 1000), 'ignored');
    assert.deepEqual(limits.toJSON(), {});
  });

  it('never holds more than its capacity; get and observe both count as use', () => {
    const limits = new ServerLimits(3);
    for (let i = 0; i < 10; i++) {
      see(limits, `host${i}:80:`, 1000 + i, i * 1000);
      assert.ok(limits.size <= 3, `size ${limits.size}`);
    }
    assert.deepEqual(limits.toJSON(), { 'host7:80:': 1007, 'host8:80:': 1008, 'host9:80:': 1009 });
    assert.equal(limits.get('host7:80:').limit, 1007);
    see(limits, 'new:1:', 500, 99000); // drops host8, the least recently used
    assert.deepEqual(Object.keys(limits.toJSON()).sort(), ['host7:80:', 'host9:80:', 'new:1:']);
  });

  it('has a default capacity in the hundreds', () => {
    const limits = new ServerLimits();
    for (let i = 0; i < 5000; i++) see(limits, `host${i}:80:`, i + 1, i * 1000);
    assert.ok(limits.size >= 100 && limits.size < 5000, `size ${limits.size}`);
    assert.equal(limitOf(limits, 'host4999:80:'), 5000);
    assert.equal(limits.get('host0:80:'), undefined);
  });
});

describe('idle allowance and margins', () => {
  it('a short learned limit shortens keep-alive in proportion instead of ending it', () => {
    assert.equal(learnedMargin(300, 1000), 75);
    assert.equal(learnedMargin(8000, 1000), 1000);
    assert.deepEqual(idleAllowance(4000, undefined, 300, 1000), { timeout: 225, limitedBy: 'learned' });
    assert.deepEqual(idleAllowance(Infinity, undefined, 200, 1000), { timeout: 150, limitedBy: 'learned' });
  });

  it('a hinted limit keeps the whole margin (as Node\'s agentKeepAliveTimeoutBuffer)', () => {
    assert.deepEqual(idleAllowance(4000, 1000, undefined, 1000), { timeout: 0, limitedBy: 'hint' });
    assert.deepEqual(idleAllowance(4000, 2000, undefined, 500), { timeout: 1500, limitedBy: 'hint' });
    assert.deepEqual(idleAllowance(4000, 5000, 1000, 1000), { timeout: 750, limitedBy: 'learned' });
  });

  it('the smallest limit wins; the learned limit is named only when it decides', () => {
    assert.deepEqual(idleAllowance(4000, undefined, undefined, 1000), { timeout: 4000, limitedBy: null });
    assert.deepEqual(idleAllowance(1000, undefined, 9000, 1000), { timeout: 1000, limitedBy: null });
  });

  it('a tentative limit\'s probe waits half the limit more; a confirmed one\'s, the uncapped free timeout', () => {
    assert.equal(probeBound(200, false, 4000), 300);
    assert.equal(probeBound(20, false, 4000), 30);
    assert.equal(probeBound(4, false, 4000), 9, 'at least a few ms beyond the limit');
    assert.equal(probeBound(3000, false, 4000), 4500, 'beyond the free timeout: a trial cut short would show nothing');
    assert.equal(probeBound(200, true, 4000), 4000);
    assert.equal(probeBound(200, true, Infinity), 10000);
    assert.equal(probeBound(60000, true, Infinity), 240000);
  });
});

describe('a free socket at its deadline', () => {
  const limits = new ServerLimits();
  see(limits, A, 400, 1000);
  const tentative = limits.peek(A);

  it('expires when nothing learned decided it', () => {
    assert.deepEqual(atDeadline(4000, undefined, undefined, false, 1000, 4000), { action: 'expire' });
  });

  it('becomes the probe when the learned limit decided it and no probe is out', () => {
    assert.deepEqual(atDeadline(4000, undefined, tentative, false, 1000, 300), { action: 'probe', bound: 600 });
    assert.deepEqual(atDeadline(4000, undefined, tentative, true, 1000, 300), { action: 'expire' });
  });

  it('waits when the limit that set its deadline was forgotten since', () => {
    assert.deepEqual(atDeadline(4000, undefined, undefined, false, 1000, 300), { action: 'wait', timeout: 4000 });
    assert.deepEqual(atDeadline(4000, 2000, undefined, false, 1000, 300), { action: 'wait', timeout: 1000 });
  });
});
