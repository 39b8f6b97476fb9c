'use strict';

// The policy of lib/server_limits.js, without sockets: given observations
// (idle times at which a server closed a socket, and when), what limit the
// agent learns, and how long a socket may then stay idle.
const assert = require('node:assert/strict');
const {
  ServerLimits, idleAllowance, learnedMargin, probeBound, agree, BURST_WINDOW,
} = require('../lib/server_limits');

const A = 'a:1:';
const B = 'b:2:';

describe('ServerLimits', () => {
  it('knows nothing at first', () => {
    const limits = new ServerLimits();
    assert.equal(limits.size, 0);
    assert.equal(limits.get(A), undefined);
    assert.deepEqual(limits.toJSON(), {});
  });

  it('a first close sets a tentative limit; a second that agrees confirms it', () => {
    const limits = new ServerLimits();
    assert.equal(limits.observe(A, 5004, 10000), 'learned');
    assert.equal(limits.get(A), 5004);
    assert.equal(limits.observe(A, 4998, 20000), 'confirmed');
    assert.equal(limits.get(A), 4998);
    assert.deepEqual(limits.toJSON(), { [A]: 4998 });
  });

  it('a tentative limit gives way to a lower close', () => {
    const limits = new ServerLimits();
    limits.observe(A, 1000, 10000);
    assert.equal(limits.observe(A, 400, 20000), 'lowered');
    assert.equal(limits.get(A), 400);
  });

  it('a single early close does not lower a confirmed limit; a second that agrees does', () => {
    const limits = new ServerLimits();
    limits.observe(A, 5000, 10000);
    limits.observe(A, 5010, 20000);
    assert.equal(limits.observe(A, 200, 30000), 'held');
    assert.equal(limits.get(A), 5000, 'one early close: the limit stays');
    assert.equal(limits.observe(A, 1200, 40000), 'held', 'another that disagrees replaces the candidate');
    assert.equal(limits.get(A), 5000);
    assert.equal(limits.observe(A, 1190, 50000), 'lowered');
    assert.equal(limits.get(A), 1190);
  });

  it('a collision lowers even a confirmed limit at once: a request was lost', () => {
    const limits = new ServerLimits();
    limits.observe(A, 5000, 10000);
    limits.observe(A, 5000, 20000);
    assert.equal(limits.observe(A, 1200, 30000, true), 'lowered');
    assert.equal(limits.get(A), 1200);
  });

  it('a close later than the limit raises it: the server kept the socket that long', () => {
    const limits = new ServerLimits();
    limits.observe(A, 200, 10000);
    assert.equal(limits.observe(A, 5000, 20000), 'raised');
    assert.equal(limits.get(A), 5000);
  });

  it('agreement: within max(50 ms, 10%)', () => {
    assert.equal(agree(300, 349), true);
    assert.equal(agree(300, 351), false);
    assert.equal(agree(5000, 5499), true);
    assert.equal(agree(5000, 5600), false);
  });

  it('a burst of closes at differing idle times is a restart: forgotten, including its first close', () => {
    const limits = new ServerLimits();
    const t = 100000;
    assert.equal(limits.observe(A, 200, t), 'learned');
    assert.equal(limits.observe(A, 900, t + 3), 'restart');
    assert.equal(limits.observe(A, 1600, t + 6), 'restart');
    assert.equal(limits.get(A), undefined);
    assert.deepEqual(limits.toJSON(), {});
    // A close well after the burst is news again.
    assert.equal(limits.observe(A, 5000, t + 10000), 'learned');
  });

  it('a restart leaves a limit learned before it as it was', () => {
    const limits = new ServerLimits();
    limits.observe(A, 5000, 10000);
    limits.observe(A, 5000, 20000);
    limits.observe(A, 300, 30000);
    limits.observe(A, 2000, 30000 + BURST_WINDOW);
    assert.equal(limits.get(A), 5000);
    // The candidate was the restart's too: one more early close is held again.
    assert.equal(limits.observe(A, 300, 90000), 'held');
  });

  it('a burst of closes at the same idle time (sockets freed together) is one observation', () => {
    const limits = new ServerLimits();
    assert.equal(limits.observe(A, 1010, 50000), 'learned');
    assert.equal(limits.observe(A, 1000, 50001), 'burst');
    assert.equal(limits.observe(A, 1005, 50002), 'burst');
    assert.equal(limits.get(A), 1000, 'the shortest of the burst');
    assert.equal(limits.observe(A, 1002, 60000), 'confirmed');
  });

  it('closes of other origins do not make a burst', () => {
    const limits = new ServerLimits();
    limits.observe(A, 200, 1000);
    limits.observe(B, 900, 1001);
    assert.deepEqual(limits.toJSON(), { [A]: 200, [B]: 900 });
  });

  it('ignores idle times below 1 ms and non-numbers', () => {
    const limits = new ServerLimits();
    assert.equal(limits.observe(A, 0.5, 1000), 'ignored');
    assert.equal(limits.observe(A, -3595000, 1000), 'ignored');
    assert.equal(limits.observe(A, NaN, 1000), 'ignored');
    assert.deepEqual(limits.toJSON(), {});
  });

  it('forget() drops a limit (a probe outlived it)', () => {
    const limits = new ServerLimits();
    limits.observe(A, 200, 1000);
    limits.forget(A);
    limits.forget(B);
    assert.equal(limits.get(A), undefined);
    assert.equal(limits.size, 0);
  });

  it('never holds more than its capacity; get and observe both count as use', () => {
    const limits = new ServerLimits(3);
    for (let i = 0; i < 10; i++) {
      limits.observe(`host${i}:80:`, 1000 + i, i * 1000);
      assert.ok(limits.size <= 3, `size ${limits.size}`);
    }
    assert.deepEqual(limits.toJSON(), { 'host7:80:': 1007, 'host8:80:': 1008, 'host9:80:': 1009 });
    assert.equal(limits.get('host7:80:'), 1007);
    limits.observe('new:1:', 500, 99000); // drops host8, the least recently used
    assert.deepEqual(Object.keys(limits.toJSON()).sort(), ['host7:80:', 'host9:80:', 'new:1:']);
  });

  it('has a default capacity in the hundreds', () => {
    const limits = new ServerLimits();
    for (let i = 0; i < 5000; i++) limits.observe(`host${i}:80:`, i + 1, i * 1000);
    assert.ok(limits.size >= 100 && limits.size < 5000, `size ${limits.size}`);
    assert.equal(limits.get('host4999:80:'), 5000);
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

  it('a probe waits for the uncapped free timeout, bounded where that is infinite', () => {
    assert.equal(probeBound(200, 4000), 4000);
    assert.equal(probeBound(200, Infinity), 10000);
    assert.equal(probeBound(60000, Infinity), 240000);
  });
});
